/**
 * The `callHttp` activity: one request of a script's `fetch`, sent by the SSRF-guarded fetcher
 * (never from the sandbox). A refusal by a rule is a `refused` result the script can catch; a
 * network failure or the deadline are `toolFailed` and `timedOut`. Every request carries the
 * call's idempotency key as an `Idempotency-Key` header, so a server that honours it can dedupe.
 */
import { Context } from "@temporalio/activity";
import { HttpRefusal, type GuardedFetch, type HttpToolResponse } from "../http-tool/index.ts";
import { idempotencyKey } from "../shared/tool-call.ts";
import type { Tracing } from "../tracing/tracing.ts";

export interface HttpCallDeps {
  guardedFetch: GuardedFetch;
  tracing: Tracing;
}

export interface HttpCallInput {
  runId: string;
  seq: number;
  request: { url: string; method: string; headers: Record<string, string>; body?: string };
  allowedHosts: string[];
  traceparent?: string;
  /** The deadline of this attempt, from the toolset's `http.fetch` policy; absent, the fetcher's own (30 s). */
  timeoutMs?: number;
}

export type HttpCallResult =
  | { ok: true; value: HttpToolResponse }
  | { ok: false; error: { code: "refused" | "toolFailed" | "timedOut"; message: string; details: { rule: string } } };

const NETWORK_RULES = new Set(["dns", "connect", "network", "aborted"]);

export function createCallHttp(deps: HttpCallDeps) {
  return async function callHttp(input: HttpCallInput): Promise<HttpCallResult> {
    const headers = { ...input.request.headers };
    if (!Object.keys(headers).some((h) => h.toLowerCase() === "idempotency-key")) headers["Idempotency-Key"] = idempotencyKey(input.runId, input.seq);
    const span = deps.tracing.startAttempt(input.traceparent, `http ${input.request.method}`, { "rewind.tool": "http.fetch", "rewind.seq": input.seq, "rewind.attempt": Context.current().info.attempt });
    const traceparent = span?.traceparent ?? input.traceparent;
    if (traceparent) headers["traceparent"] = traceparent;
    let code: string | undefined = "interrupted";
    try {
      const value = await deps.guardedFetch({ ...input.request, headers }, input.allowedHosts, Context.current().cancellationSignal, input.timeoutMs);
      code = undefined;
      return { ok: true, value };
    } catch (error) {
      if (!(error instanceof HttpRefusal)) throw error;
      const refusal = error.rule === "timeout" ? "timedOut" : NETWORK_RULES.has(error.rule) ? "toolFailed" : "refused";
      code = refusal;
      return { ok: false, error: { code: refusal, message: `fetch: ${error.message}`, details: { rule: error.rule } } };
    } finally {
      span?.end(code ? { ok: false, code } : { ok: true });
    }
  };
}
