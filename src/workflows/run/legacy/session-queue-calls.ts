/**
 * Before session queues were removed (`PATCHES.callsFollowTheirSession` no longer routes
 * anything): a run could schedule an MCP call on the task queue of the worker holding its isolate,
 * with a 5 s schedule-to-start timeout, and send the call again on the shared queue when no worker
 * took it in time. Runs recorded that way replay that second schedule here; a call such a run had
 * on a session queue when its workers were upgraded (no worker polls those queues any more) is
 * sent again the same way. Calls scheduled now have no schedule-to-start timeout, so only those
 * reach this.
 */
import type { ActivityFailure } from "@temporalio/workflow";
import { TimeoutFailure } from "@temporalio/workflow";

/** Whether a call's attempt was never taken by a worker of the session queue it was scheduled on. */
export function neverStartedOnSessionQueue(error: ActivityFailure): boolean {
  return error.cause instanceof TimeoutFailure && error.cause.timeoutType === "SCHEDULE_TO_START";
}
