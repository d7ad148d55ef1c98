/**
 * Sends an MCP tool call as a `callMcpTool` activity with the tool's policy: activity id = seq,
 * the same idempotency key on every attempt, a heartbeat so a lost worker is noticed quickly,
 * and the failure of the last attempt translated into the ToolError code the script sees.
 */
import { ActivityFailure, isCancellation, proxyActivities } from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";
import type { JournalEntry } from "../shared/journal.ts";
import { DEFAULT_MCP_TIMEOUT_MS } from "../shared/tool-call.ts";
import type { PinnedToolset } from "../shared/toolset.ts";
import { failure, outcomeOfFailure, retryPolicyFor, type CallOutcome } from "./call-outcome.ts";

/** A worker that stops heartbeating for this long is taken as lost, and the attempt as interrupted. */
const HEARTBEAT_TIMEOUT_MS = 15_000;

export function splitTool(qualified: string): { group: string; tool: string } {
  const dot = qualified.indexOf(".");
  return { group: qualified.slice(0, dot), tool: qualified.slice(dot + 1) };
}

export async function dispatchMcp(entry: JournalEntry, runId: string, toolset: PinnedToolset): Promise<CallOutcome> {
  const { group, tool } = splitTool(entry.tool);
  const server = toolset.mcpServers[group];
  if (!server) return failure(entry, "unknownTool", `${entry.tool} is not a tool of this run's toolset`);
  const policy = toolset.policies[entry.tool] ?? {};
  const timeoutMs = policy.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
  const { callMcpTool } = proxyActivities<Activities>({
    activityId: String(entry.seq),
    summary: `${entry.tool} #${entry.seq}`,
    // The request's own timeout fires first and fails the attempt cleanly; this is the backstop.
    startToCloseTimeout: timeoutMs + 5_000,
    heartbeatTimeout: Math.min(HEARTBEAT_TIMEOUT_MS, timeoutMs + 5_000),
    retry: retryPolicyFor(policy),
  });
  try {
    const result = await callMcpTool({ runId, seq: entry.seq, server: group, tool, url: server.url, args: entry.args, timeoutMs });
    entry.attempts = result.attempt;
    return result.ok ? { ok: true, value: result.value } : failure(entry, "toolFailed", result.error.message, result.error.details);
  } catch (error) {
    if (isCancellation(error)) throw error;
    if (error instanceof ActivityFailure) return outcomeOfFailure(entry, error, policy);
    throw error;
  }
}
