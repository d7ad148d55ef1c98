/**
 * Sends a script's `fetch` as a `callHttp` activity under the toolset's `http.fetch` policy.
 * Without one, safe methods (GET, HEAD, OPTIONS) are retried after an interruption like any
 * tool and other methods are sent at most once, since a repeated POST is an effect the server may
 * not deduplicate; an explicit `onInterruption` applies to every method. A policy's `timeout` is
 * the request's one deadline (default 30 s). Approval and concurrency are the call runner's, as
 * for every tool.
 */
import { ActivityFailure, isCancellation, proxyActivities } from "@temporalio/workflow";
import type { Activities } from "../../activities/index.ts";
import { HTTP_TOOL, type JournalEntry } from "../../shared/index.ts";
import type { PinnedToolset, ToolPolicy, RunTrace } from "../../shared/index.ts";
import { failure, outcomeOfFailure, retryPolicyFor, type CallOutcome } from "./call-outcome.ts";
import { traceOf } from "./mcp-dispatch.ts";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
/** The fetcher's own deadline, when the policy sets none. */
const DEFAULT_TIMEOUT_MS = 30_000;
/** How long past the request's deadline the attempt may last before Temporal takes it as lost. */
const BACKSTOP_MS = 15_000;

/**
 * The policy a request is sent under. A toolset without an `http.fetch` policy (every toolset
 * pinned before the http tool had one) gets exactly the options its runs always had: the
 * per-method interruption rule and a 45-second attempt, with the fetcher's deadline.
 */
function policyFor(toolset: PinnedToolset, method: string): { retry: ToolPolicy; timeoutMs?: number } {
  const pinned = toolset.policies[HTTP_TOOL] ?? {};
  const onInterruption = pinned.onInterruption ?? (SAFE_METHODS.has(method) ? "retry" : "at_most_once");
  return { retry: { onInterruption }, ...(pinned.timeoutMs === undefined ? {} : { timeoutMs: pinned.timeoutMs }) };
}

export async function dispatchHttp(
  entry: JournalEntry,
  runId: string,
  toolset: PinnedToolset,
  trace?: RunTrace,
): Promise<CallOutcome> {
  if (!toolset.http) return failure(entry, "unknownTool", "this toolset does not enable http");
  const request = entry.args as { url: string; method: string; headers: Record<string, string>; body?: string };
  const { retry: policy, timeoutMs } = policyFor(toolset, request.method);
  const { callHttp } = proxyActivities<Activities>({
    activityId: String(entry.seq),
    summary: `fetch ${request.method} ${request.url.slice(0, 120)} #${entry.seq}`,
    startToCloseTimeout: (timeoutMs ?? DEFAULT_TIMEOUT_MS) + BACKSTOP_MS,
    retry: retryPolicyFor(policy),
  });
  try {
    const result = await callHttp({
      runId,
      seq: entry.seq,
      request,
      allowedHosts: toolset.http.allowedHosts,
      ...traceOf(trace, entry.seq),
      // Input only, never a command: sent only when the policy sets it, so older runs' inputs stay as they were.
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
    return result.ok
      ? { ok: true, value: result.value }
      : failure(entry, result.error.code, result.error.message, result.error.details);
  } catch (error) {
    if (isCancellation(error)) throw error;
    if (error instanceof ActivityFailure) return outcomeOfFailure(entry, error, policy);
    throw error;
  }
}
