/**
 * Sends a host-tool call to the harness's own worker: an activity whose type is the qualified
 * tool name, on the task queue the toolset names for the group, with the call's policy and a
 * heartbeat timeout, so a harness worker that disappears is noticed and the call retried.
 */
import { ActivityFailure, isCancellation, proxyActivities } from "@temporalio/workflow";
import {
  DEFAULT_HEARTBEAT_TIMEOUT_MS,
  DEFAULT_HOST_TIMEOUT_MS,
  openHostResult,
  type HostCallInput,
} from "../../shared/index.ts";
import type { JournalEntry, PinnedToolset, RunTrace } from "../../shared/index.ts";
import { failure, outcomeOfFailure, retryPolicyFor, type CallOutcome } from "./call-outcome.ts";
import { splitTool, traceOf } from "./mcp-dispatch.ts";

type HostActivities = Record<string, (input: HostCallInput) => Promise<unknown>>;

export async function dispatchHost(
  entry: JournalEntry,
  toolset: PinnedToolset,
  trace?: RunTrace,
): Promise<CallOutcome> {
  const group = toolset.hostTools[splitTool(entry.tool).group];
  if (!group) return failure(entry, "unknownTool", `${entry.tool} is not a tool of this run's toolset`);
  const policy = toolset.policies[entry.tool] ?? {};
  const activities = proxyActivities<HostActivities>({
    taskQueue: group.taskQueue,
    activityId: String(entry.seq),
    summary: `${entry.tool} #${entry.seq}`,
    startToCloseTimeout: policy.timeoutMs ?? DEFAULT_HOST_TIMEOUT_MS,
    heartbeatTimeout: policy.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS,
    retry: retryPolicyFor(policy),
  });
  const call = activities[entry.tool];
  if (!call) return failure(entry, "unknownTool", `${entry.tool} can't be scheduled`);
  try {
    // The envelope's flag rides in the activity's input, which a replay does not compare with
    // the history, and the recorded answer decides what is read from it: a run replays the same
    // way whichever worker answered it, so the flag needs no patch.
    const answer = await call({
      args: (entry.args ?? {}) as Record<string, unknown>,
      ...traceOf(trace, entry.seq),
      resultEnvelope: true,
    });
    const { value, attempt } = openHostResult(answer);
    return { ok: true, value, ...(attempt === undefined ? {} : { attempts: attempt }) };
  } catch (error) {
    if (isCancellation(error)) throw error;
    if (error instanceof ActivityFailure) return outcomeOfFailure(entry, error, policy);
    throw error;
  }
}
