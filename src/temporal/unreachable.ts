/**
 * Telling "Temporal is not there" apart from every other failure of a call to it. A stopped or
 * unreachable server surfaces, after the client's own retries (about 20 s), as gRPC UNAVAILABLE
 * (`No connection established. Last error: connect ECONNREFUSED …`), wrapped by the client in a
 * ServiceError ("Failed to start Workflow") or bare from `workflowService`; a call given a
 * deadline ends in DEADLINE_EXCEEDED instead, which a live server that is slow to answer also
 * gives, so that one only counts once the server is asked again and does not answer.
 */
import { isGrpcServiceError, type ConnectionLike } from "@temporalio/client";

/** gRPC status codes (the numbers are the protocol's). */
const UNAVAILABLE = 14;
const DEADLINE_EXCEEDED = 4;

/** How deep a chain of `cause`s is followed (ServiceError → gRPC error is one step). */
const MAX_CAUSES = 5;

export interface TemporalCallFailure {
  /** `unavailable`: the server could not be reached; `deadline`: no answer in time (maybe a live server). */
  kind: "unavailable" | "deadline";
  /** The transport's words, shortened: `connect ECONNREFUSED 127.0.0.1:7233`. */
  reason: string;
}

/** `connect ECONNREFUSED …` out of grpc-js's `14 UNAVAILABLE: No connection established. Last error: …`. */
function reasonOf(details: string): string {
  const last = /Last error: (?:Error: )?(.*?)\.?\s*(?:Resolution note:.*)?$/s.exec(details)?.[1]?.trim();
  return last && last.length > 0 ? last : details.replace(/^\d+ [A-Z_]+: /, "").trim() || details;
}

/** The gRPC failure under `error` that says Temporal did not answer, if there is one. */
export function temporalCallFailure(error: unknown): TemporalCallFailure | undefined {
  let current: unknown = error;
  for (let depth = 0; depth <= MAX_CAUSES && current !== undefined && current !== null; depth++) {
    if (isGrpcServiceError(current)) {
      if (current.code === UNAVAILABLE) return { kind: "unavailable", reason: reasonOf(current.details) };
      if (current.code === DEADLINE_EXCEEDED) return { kind: "deadline", reason: reasonOf(current.details) };
      return undefined;
    }
    current = current instanceof Error ? current.cause : undefined;
  }
  return undefined;
}

/** Whether the server behind `connection` answers a trivial call within `ms`. */
export async function temporalAnswers(
  connection: Pick<ConnectionLike, "withDeadline" | "workflowService">,
  ms = 2_000,
): Promise<boolean> {
  try {
    await connection.withDeadline(Date.now() + ms, () => connection.workflowService.getSystemInfo({}));
    return true;
  } catch (error) {
    // Any answer of the server's own (a refusal included) means it is there.
    return isGrpcServiceError(error) && error.code !== UNAVAILABLE && error.code !== DEADLINE_EXCEEDED;
  }
}

/**
 * Whether `error` means Temporal is unreachable now: UNAVAILABLE, or a deadline the server still
 * does not answer after (asked once more through `answers`).
 */
export async function isTemporalUnreachable(error: unknown, answers: () => Promise<boolean>): Promise<boolean> {
  const failure = temporalCallFailure(error);
  if (!failure) return false;
  return failure.kind === "unavailable" || !(await answers());
}
