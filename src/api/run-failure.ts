/**
 * What the API says a failed run failed with: always a type from RUN_FAILURE_TYPES. A run's own
 * failure already carries one; a run that failed on an error of Rewind's own before those were
 * typed (an ActivityFailure, an ApplicationFailure typed Error) reads as RunBroken, with the type
 * it was recorded with in `details.recordedType`.
 */
import { ActivityFailure, ApplicationFailure } from "@temporalio/common";
import { RUN_FAILURE_TYPES, isRunFailureType, type RunFailure } from "../shared/index.ts";

function describe(cause: Error): string {
  if (cause instanceof ActivityFailure && cause.cause)
    return `${cause.activityType ?? "activity"}: ${cause.cause.message}`;
  return cause.message;
}

/** `cause`: the failure a WorkflowFailedError carries; `fallback`: its own message. */
export function runFailureOf(cause: Error | undefined, fallback: string): RunFailure {
  if (cause instanceof ApplicationFailure && isRunFailureType(cause.type))
    return { type: cause.type, message: cause.message, details: cause.details?.[0] };
  const recordedType = cause instanceof ApplicationFailure ? (cause.type ?? cause.name) : (cause?.name ?? "unknown");
  return {
    type: RUN_FAILURE_TYPES.broken,
    message: cause ? describe(cause) : fallback,
    details: { recordedType },
  };
}
