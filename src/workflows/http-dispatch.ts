/**
 * Sends a script's `fetch` as a `callHttp` activity. Safe methods (GET, HEAD, OPTIONS) are
 * retried after an interruption like any tool; other methods are sent at most once, since a
 * repeated POST is an effect the server may not deduplicate.
 */
import { ActivityFailure, isCancellation, proxyActivities } from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";
import type { JournalEntry } from "../shared/journal.ts";
import type { PinnedToolset } from "../shared/toolset.ts";
import type { RunTrace } from "../shared/trace-context.ts";
import { failure, outcomeOfFailure, retryPolicyFor, type CallOutcome } from "./call-outcome.ts";
import { traceOf } from "./mcp-dispatch.ts";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export async function dispatchHttp(entry: JournalEntry, runId: string, toolset: PinnedToolset, trace?: RunTrace): Promise<CallOutcome> {
  if (!toolset.http) return failure(entry, "unknownTool", "this toolset does not enable http");
  const request = entry.args as { url: string; method: string; headers: Record<string, string>; body?: string };
  const policy = { onInterruption: SAFE_METHODS.has(request.method) ? "retry" as const : "at_most_once" as const };
  const { callHttp } = proxyActivities<Activities>({
    activityId: String(entry.seq),
    summary: `fetch ${request.method} ${request.url.slice(0, 120)} #${entry.seq}`,
    startToCloseTimeout: "45 seconds",
    retry: retryPolicyFor(policy),
  });
  try {
    const result = await callHttp({ runId, seq: entry.seq, request, allowedHosts: toolset.http.allowedHosts, ...traceOf(trace, entry.seq) });
    return result.ok ? { ok: true, value: result.value } : failure(entry, result.error.code, result.error.message, result.error.details);
  } catch (error) {
    if (isCancellation(error)) throw error;
    if (error instanceof ActivityFailure) return outcomeOfFailure(entry, error, policy);
    throw error;
  }
}
