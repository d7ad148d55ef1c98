/**
 * Measures each attempt of a call an activity sends (MCP and http): its duration, and its
 * outcome by one name — `ok`, the code of a result the script gets (`toolFailed`, `refused`), the
 * interruption an attempt throws for the call's policy (`unreachable`, `interrupted`, `timedOut`,
 * `schemaChanged`…, named below), `cancelled`, or `error`.
 */
import { ApplicationFailure, CancelledFailure } from "@temporalio/common";
import type { CallKind, CallMetrics } from "../metrics/index.ts";
import { CALL_FAILURE, type CallFailureType } from "../shared/index.ts";

/** The metric's outcome for each failure type; the metric's labels predate the types' names. */
const OUTCOME_OF: Record<CallFailureType, string> = {
  [CALL_FAILURE.unreachable]: "unreachable",
  [CALL_FAILURE.interrupted]: "interrupted",
  [CALL_FAILURE.attemptTimedOut]: "timedOut",
  [CALL_FAILURE.unauthorized]: "unauthorized",
  [CALL_FAILURE.forbidden]: "forbidden",
  [CALL_FAILURE.schemaChanged]: "schemaChanged",
  [CALL_FAILURE.targetNotAllowed]: "targetNotAllowed",
  [CALL_FAILURE.hostToolError]: "hostToolError",
  [CALL_FAILURE.questionUnanswered]: "questionUnanswered",
};
const OUTCOME_OF_FAILURE = new Map<string, string>(Object.entries(OUTCOME_OF));

type AttemptResult = { ok: true } | { ok: false; error: { code: string } };

function outcomeOfError(error: unknown): string {
  if (error instanceof CancelledFailure) return "cancelled";
  if (error instanceof ApplicationFailure) return OUTCOME_OF_FAILURE.get(error.type ?? "") ?? "error";
  return "error";
}

/** `send`, with each attempt's duration and outcome recorded under `kind` and the call's group. */
export function measuredAttempts<I, R extends AttemptResult>(
  metrics: CallMetrics | undefined,
  kind: CallKind,
  groupOf: (input: I) => string,
  send: (input: I) => Promise<R>,
): (input: I) => Promise<R> {
  if (!metrics) return send;
  return async (input) => {
    const began = performance.now();
    const seconds = () => (performance.now() - began) / 1000;
    try {
      const result = await send(input);
      metrics.callAttempt(kind, groupOf(input), result.ok ? "ok" : result.error.code, seconds());
      return result;
    } catch (error) {
      metrics.callAttempt(kind, groupOf(input), outcomeOfError(error), seconds());
      throw error;
    }
  };
}
