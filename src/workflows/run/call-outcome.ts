/**
 * What the script sees when a tool-call activity ends: the retry options a call's policy maps
 * to, and the ToolError code of the final failure. Shared by MCP and host-tool dispatch, so
 * both kinds of tools keep the same promises.
 */
import type { ActivityFailure } from "@temporalio/workflow";
import { ApplicationFailure, TimeoutFailure, type RetryPolicy } from "@temporalio/workflow";
import type { CredentialScope, JournalEntry, SpeculativeStep, ToolPolicy } from "../../shared/index.ts";
import {
  CALL_FAILURE,
  HOST_TOOL_ERROR_TYPE,
  RETRY_ATTEMPTS,
  isHostToolErrorCode,
  type ToolErrorData,
} from "../../shared/index.ts";

/**
 * A call's outcome; a result may come with the script's next step, taken speculatively by the
 * worker. `attempts` and `credentials`, when the dispatch knows them: how many attempts the call
 * took and whose credentials it was sent with (CallRunner writes them into the journal).
 */
export type CallOutcome = ({ ok: true; value: unknown; step?: SpeculativeStep } | { ok: false; error: ToolErrorData }) &
  AttemptsTaken;

export interface AttemptsTaken {
  attempts?: number;
  credentials?: CredentialScope;
}

export function failure(
  entry: JournalEntry,
  code: ToolErrorData["code"],
  message: string,
  details?: unknown,
): CallOutcome {
  return {
    ok: false,
    error: { code, message, tool: entry.tool, seq: entry.seq, ...(details === undefined ? {} : { details }) },
  };
}

export function retryPolicyFor(policy: ToolPolicy): RetryPolicy {
  if (policy.onInterruption === "at_most_once") return { maximumAttempts: 1 };
  return {
    maximumAttempts: RETRY_ATTEMPTS,
    initialInterval: "500ms",
    backoffCoefficient: 2,
    maximumInterval: "20s",
    nonRetryableErrorTypes: [CALL_FAILURE.unauthorized, CALL_FAILURE.forbidden, HOST_TOOL_ERROR_TYPE],
  };
}

/** Activities put the attempt number in their failure's details; timeouts carry none. */
function attemptsOf(cause: unknown): number | undefined {
  const details =
    cause instanceof ApplicationFailure ? (cause.details?.[0] as { attempt?: unknown } | undefined) : undefined;
  return typeof details?.attempt === "number" ? details.attempt : undefined;
}

/** Maps the activity's final failure to what the script sees, under the call's policy. */
export function outcomeOfFailure(entry: JournalEntry, error: ActivityFailure, policy: ToolPolicy): CallOutcome {
  const attempts =
    attemptsOf(error.cause) ??
    (policy.onInterruption === "at_most_once" || (error.cause instanceof ApplicationFailure && error.cause.nonRetryable)
      ? 1
      : RETRY_ATTEMPTS);
  return { ...scriptFailureOf(entry, error, policy), attempts };
}

/** What the script sees of the activity's final failure. */
function scriptFailureOf(entry: JournalEntry, error: ActivityFailure, policy: ToolPolicy): CallOutcome {
  const atMostOnce = policy.onInterruption === "at_most_once";
  const cause = error.cause;
  const unknown = (why: string) =>
    failure(entry, "outcomeUnknown", `${entry.tool}: ${why}; the call may or may not have taken effect`);
  if (cause instanceof TimeoutFailure) {
    return atMostOnce
      ? unknown(`the attempt ended without an answer (${cause.timeoutType ?? "timeout"})`)
      : failure(entry, "timedOut", `${entry.tool}: no answer after ${RETRY_ATTEMPTS} attempts`);
  }
  if (!(cause instanceof ApplicationFailure))
    return failure(entry, "toolFailed", `${entry.tool}: ${cause?.message ?? error.message}`);
  switch (cause.type) {
    case HOST_TOOL_ERROR_TYPE: {
      const details = cause.details?.[0] as { code?: unknown; details?: unknown } | undefined;
      return failure(
        entry,
        isHostToolErrorCode(details?.code) ? details.code : "toolFailed",
        cause.message,
        details?.details ?? undefined,
      );
    }
    case CALL_FAILURE.unreachable: {
      // Said by activities of this release on: an earlier attempt sent the call. Absent from
      // older histories, which replay as they ran.
      const sentBefore = (cause.details?.[0] as { sentBefore?: unknown } | undefined)?.sentBefore === true;
      return sentBefore
        ? failure(
            entry,
            "toolFailed",
            `${entry.tool}: the server could not be reached (${cause.message}); an earlier attempt sent the call, so it may have taken effect`,
            { reason: "unreachable", sent: true },
          )
        : failure(
            entry,
            "toolFailed",
            `${entry.tool}: the server could not be reached; the call was not sent (${cause.message})`,
            { reason: "unreachable" },
          );
    }
    case CALL_FAILURE.interrupted:
      return unknown(`the connection broke after the call was sent (${cause.message})`);
    case CALL_FAILURE.attemptTimedOut:
      return atMostOnce ? unknown(cause.message) : failure(entry, "timedOut", `${entry.tool}: ${cause.message}`);
    // Types no history before them holds: older runs replay the same as they ran.
    case CALL_FAILURE.questionUnanswered:
      return failure(entry, "timedOut", `${entry.tool}: ${cause.message}`, { reason: "questionUnanswered" });
    case CALL_FAILURE.targetNotAllowed:
      return failure(entry, "refused", `${entry.tool}: ${cause.message}; the call was not sent`, {
        reason: "targetNotAllowed",
      });
    default:
      return failure(entry, "toolFailed", `${entry.tool}: ${cause.message}`, { reason: cause.type });
  }
}
