/**
 * The `callHttp` activity: one request of a script's `fetch`, sent by the SSRF-guarded fetcher
 * (never from the sandbox). A refusal by a rule is a `refused` result the script can catch.
 * Failures of the network are interruptions, like an MCP call's, for the call's policy to
 * decide: nothing sent (no name, no connection) is `Unreachable`; a request that may have
 * reached the server (no response, a body cut off, the worker stopping) is `Interrupted`; the
 * deadline is `AttemptTimedOut`. Every request carries the call's idempotency key as an
 * `Idempotency-Key` header, so a server that honours it can dedupe a request sent again.
 */
import { ApplicationFailure, Context } from "@temporalio/activity";
import { HttpRefusal, type GuardedFetch, type HttpToolResponse } from "../http-tool/index.ts";
import { CALL_FAILURE, idempotencyKey } from "../shared/index.ts";
import type { Tracing } from "../tracing/index.ts";
import { httpAttemptSpan } from "./attempt-spans.ts";

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
  // toolFailed and timedOut: what attempts answered before network failures became interruptions,
  // still in the histories of runs that made them.
  | { ok: false; error: { code: "refused" | "toolFailed" | "timedOut"; message: string; details: { rule: string } } };

/** Rules that say the attempt was interrupted, and how; any other refusal is the script's to catch. */
const INTERRUPTIONS: Partial<Record<HttpRefusal["rule"], (typeof CALL_FAILURE)[keyof typeof CALL_FAILURE]>> = {
  dns: CALL_FAILURE.unreachable,
  connect: CALL_FAILURE.unreachable,
  noResponse: CALL_FAILURE.interrupted,
  network: CALL_FAILURE.interrupted,
  aborted: CALL_FAILURE.interrupted,
  timeout: CALL_FAILURE.attemptTimedOut,
};

export function createCallHttp(deps: HttpCallDeps) {
  return async function callHttp(input: HttpCallInput): Promise<HttpCallResult> {
    const headers = { ...input.request.headers };
    if (!Object.keys(headers).some((h) => h.toLowerCase() === "idempotency-key"))
      headers["Idempotency-Key"] = idempotencyKey(input.runId, input.seq);
    const spanned = httpAttemptSpan({
      runId: input.runId,
      seq: input.seq,
      method: input.request.method,
      url: input.request.url,
      attempt: Context.current().info.attempt,
    });
    const span = deps.tracing.startAttempt(input.traceparent, spanned.name, spanned.attributes);
    const traceparent = span?.traceparent ?? input.traceparent;
    if (traceparent) headers["traceparent"] = traceparent;
    /** The span's `error.type`: the failure's type, `refused`, or the status of a 4xx/5xx answer. */
    let errorType: string | undefined = CALL_FAILURE.interrupted;
    try {
      const value = await deps.guardedFetch(
        { ...input.request, headers },
        input.allowedHosts,
        Context.current().cancellationSignal,
        input.timeoutMs,
      );
      span?.annotate({ "http.response.status_code": value.status });
      errorType = value.status >= 400 ? String(value.status) : undefined;
      return { ok: true, value };
    } catch (error) {
      if (!(error instanceof HttpRefusal)) throw error;
      const interruption = INTERRUPTIONS[error.rule];
      if (interruption) {
        errorType = interruption;
        throw ApplicationFailure.create({
          type: interruption,
          message: `fetch: ${error.message}`,
          details: [{ attempt: Context.current().info.attempt, rule: error.rule }],
        });
      }
      errorType = "refused";
      span?.annotate({ "rewind.http.refusal": error.rule });
      return {
        ok: false,
        error: { code: "refused", message: `fetch: ${error.message}`, details: { rule: error.rule } },
      };
    } finally {
      span?.end(errorType === undefined ? {} : { errorType });
    }
  };
}
