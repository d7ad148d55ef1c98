/**
 * Sends an MCP tool call as a `callMcpTool` activity with the tool's policy: activity id = seq,
 * the same idempotency key on every attempt, a heartbeat so a lost worker is noticed quickly,
 * and the failure of the last attempt translated into the ToolError code the script sees.
 */
import { ActivityFailure, ApplicationFailure, TimeoutFailure, isCancellation, proxyActivities } from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";
import type { JournalEntry } from "../shared/journal.ts";
import { CALL_FAILURE, DEFAULT_MCP_TIMEOUT_MS, RETRY_ATTEMPTS } from "../shared/tool-call.ts";
import type { ToolErrorData } from "../shared/tool-error.ts";
import type { PinnedToolset } from "../shared/toolset.ts";
import type { CallOutcome } from "./dispatch.ts";

/** A worker that stops heartbeating for this long is taken as lost, and the attempt as interrupted. */
const HEARTBEAT_TIMEOUT_MS = 15_000;

export function splitTool(qualified: string): { group: string; tool: string } {
  const dot = qualified.indexOf(".");
  return { group: qualified.slice(0, dot), tool: qualified.slice(dot + 1) };
}

function failure(entry: JournalEntry, code: ToolErrorData["code"], message: string, details?: unknown): CallOutcome {
  return { ok: false, error: { code, message, tool: entry.tool, seq: entry.seq, ...(details === undefined ? {} : { details }) } };
}

/** Maps the activity's final failure to what the script sees, under the call's policy. */
export function outcomeOfFailure(entry: JournalEntry, error: ActivityFailure, atMostOnce: boolean): CallOutcome {
  const cause = error.cause;
  const unknown = (why: string) => failure(entry, "outcomeUnknown", `${entry.tool}: ${why}; the call may or may not have taken effect`);
  if (cause instanceof TimeoutFailure) {
    return atMostOnce ? unknown(`the attempt ended without an answer (${cause.timeoutType ?? "timeout"})`) : failure(entry, "timedOut", `${entry.tool}: no answer after ${RETRY_ATTEMPTS} attempts`);
  }
  if (cause instanceof ApplicationFailure) {
    switch (cause.type) {
      case CALL_FAILURE.unreachable:
        return failure(entry, "toolFailed", `${entry.tool}: the server could not be reached; the call was not sent (${cause.message})`, { reason: "unreachable" });
      case CALL_FAILURE.interrupted:
        return unknown(`the connection broke after the call was sent (${cause.message})`);
      case CALL_FAILURE.timedOut:
        return atMostOnce ? unknown(cause.message) : failure(entry, "timedOut", `${entry.tool}: ${cause.message}`);
      default:
        return failure(entry, "toolFailed", `${entry.tool}: ${cause.message}`, { reason: cause.type });
    }
  }
  return failure(entry, "toolFailed", `${entry.tool}: ${cause?.message ?? error.message}`);
}

/** Activities put the attempt number in their failure's details; timeouts carry none. */
function attemptsOf(error: unknown): number | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  const details = cause instanceof ApplicationFailure ? (cause.details?.[0] as { attempt?: unknown } | undefined) : undefined;
  return typeof details?.attempt === "number" ? details.attempt : undefined;
}

export async function dispatchMcp(entry: JournalEntry, runId: string, toolset: PinnedToolset): Promise<CallOutcome> {
  const { group, tool } = splitTool(entry.tool);
  const server = toolset.mcpServers[group];
  if (!server) return failure(entry, "unknownTool", `${entry.tool} is not a tool of this run's toolset`);
  const policy = toolset.policies[entry.tool] ?? {};
  const atMostOnce = policy.onInterruption === "at_most_once";
  const timeoutMs = policy.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
  const { callMcpTool } = proxyActivities<Activities>({
    activityId: String(entry.seq),
    summary: `${entry.tool} #${entry.seq}`,
    // The request's own timeout fires first and fails the attempt cleanly; this is the backstop.
    startToCloseTimeout: timeoutMs + 5_000,
    heartbeatTimeout: Math.min(HEARTBEAT_TIMEOUT_MS, timeoutMs + 5_000),
    retry: atMostOnce
      ? { maximumAttempts: 1 }
      : {
        maximumAttempts: RETRY_ATTEMPTS, initialInterval: "500ms", backoffCoefficient: 2, maximumInterval: "20s",
        nonRetryableErrorTypes: [CALL_FAILURE.unauthorized, CALL_FAILURE.forbidden],
      },
  });
  try {
    const result = await callMcpTool({ runId, seq: entry.seq, server: group, tool, url: server.url, args: entry.args, timeoutMs });
    entry.attempts = result.attempt;
    return result.ok ? { ok: true, value: result.value } : failure(entry, "toolFailed", result.error.message, result.error.details);
  } catch (error) {
    if (isCancellation(error)) throw error;
    entry.attempts = attemptsOf(error) ?? (atMostOnce ? 1 : RETRY_ATTEMPTS);
    if (error instanceof ActivityFailure) return outcomeOfFailure(entry, error, atMostOnce);
    throw error;
  }
}
