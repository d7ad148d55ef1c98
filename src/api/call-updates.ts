/**
 * Sends the updates through which the harness decides or answers a run's call (approve, reject,
 * resume, answer input, roll back). The run's validator refuses a call that is not waiting
 * (→ 409); an update that met a failed workflow task is sent again for a few seconds, then
 * answered 503 (try again); a run that ended meanwhile is a 409 too.
 */
import {
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
} from "@temporalio/client";
import { temporalCallFailure } from "../temporal/index.ts";
import { HttpError } from "./http-error.ts";

/**
 * How long an update refused for a failed workflow task is sent again. The task is retried by
 * Temporal after the worker reports it, which on a loaded machine took longer than the 0.6 s the
 * first version waited, and the request then ended in a 500.
 */
const RESEND_FOR_MS = 8_000;

/** gRPC FAILED_PRECONDITION under the client's error, as an update meeting a failed workflow task gets it. */
function isFailedPrecondition(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  return cause?.code === 9 || (error as { code?: unknown } | undefined)?.code === 9;
}

/** The run could not take the update now; nothing was decided, and the same request may be sent again. */
function notTakenNow(runId: string): HttpError {
  return new HttpError(
    503,
    "unavailable",
    `run ${runId} could not take the request now (its workflow task is being retried); try again`,
  );
}

/**
 * Sends `send` (one update to run `runId`); `refused` is the 409's message when the run's
 * validator refuses it.
 */
export async function sendCallUpdate<T>(
  client: Client,
  runId: string,
  send: () => Promise<T>,
  refused: string,
  resendForMs = RESEND_FOR_MS,
): Promise<T> {
  try {
    // Temporal refuses an update whose workflow task failed (FAILED_PRECONDITION), e.g. when
    // the run tried to end while a result was arriving: the task is retried and the update
    // was not applied, so it is sent again, a few times.
    const until = Date.now() + resendForMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await send();
      } catch (error) {
        if (!isFailedPrecondition(error) || Date.now() >= until) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.min(100 * attempt, 1000)));
      }
    }
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError) throw new HttpError(409, "conflict", refused);
    // Temporal did not answer: there is nothing to look at, and the run did not end for it.
    if (temporalCallFailure(error)) throw error;
    // The run may have ended between the caller's check and the update, whatever error that
    // surfaces as ("update was aborted by closing workflow", not found…): look again.
    const now = await client.workflow
      .getHandle(runId)
      .describe()
      .catch((described: unknown) => {
        if (temporalCallFailure(described)) throw described;
        return undefined;
      });
    if (error instanceof WorkflowNotFoundError || !now || now.status.name !== "RUNNING") {
      throw new HttpError(
        409,
        "conflict",
        `run ${runId} is no longer running; its calls can no longer be decided or answered`,
      );
    }
    // Still running: its workflow task kept failing, or the update's wait ended before a busy
    // or absent worker took it. Nothing was decided.
    if (isFailedPrecondition(error) || error instanceof WorkflowUpdateRPCTimeoutOrCancelledError)
      throw notTakenNow(runId);
    throw error;
  }
}
