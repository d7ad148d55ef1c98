/**
 * Sends the updates through which the harness decides or answers a run's call (approve, reject,
 * resume, answer input). The run's validator refuses a call that is not waiting (→ 409); an
 * update that met a failed workflow task is sent again; a run that ended meanwhile is a 409 too.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from "@temporalio/client";
import { temporalCallFailure } from "../temporal/index.ts";
import { HttpError } from "./http-error.ts";

const ATTEMPTS = 4;

/** gRPC FAILED_PRECONDITION under the client's error, as an update meeting a failed workflow task gets it. */
function isFailedPrecondition(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  return cause?.code === 9 || (error as { code?: unknown } | undefined)?.code === 9;
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
): Promise<T> {
  try {
    // Temporal refuses an update whose workflow task failed (FAILED_PRECONDITION), e.g. when
    // the run tried to end while a result was arriving: the task is retried and the update
    // was not applied, so it is sent again, a few times.
    for (let attempt = 1; ; attempt++) {
      try {
        return await send();
      } catch (error) {
        if (attempt >= ATTEMPTS || !isFailedPrecondition(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
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
    throw error;
  }
}
