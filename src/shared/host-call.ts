/**
 * Input of a host-tool activity: the arguments and the call's trace context. The activity type
 * is the qualified tool name, and the idempotency key comes from the workflow id and activity
 * id (`<run_id>/<seq>`), so neither travels in the input.
 *
 * `resultEnvelope`: the run asks the harness's worker to answer in a `HostResultEnvelope`, which
 * says on which attempt the tool succeeded (the journal's `attempts`). A worker that does not know
 * the flag answers the bare value, and a worker that knows it answers bare to a run that did not
 * ask: neither side of an upgrade mistakes an envelope for a value.
 */
export interface HostCallInput {
  args: Record<string, unknown>;
  traceparent?: string;
  resultEnvelope?: true;
}

/** The key that marks an envelope; no tool's own result is expected to carry it. */
export const HOST_RESULT_ENVELOPE_KEY = "rewind.hostResult/v1";

/** A host tool's result with the attempt it succeeded on, as asked by `resultEnvelope`. */
export interface HostResultEnvelope {
  [HOST_RESULT_ENVELOPE_KEY]: { attempt: number };
  value: unknown;
}

/** The value and attempt of an envelope; a bare value (a worker that does not envelope) has no attempt. */
export function openHostResult(answer: unknown): { value: unknown; attempt?: number } {
  if (typeof answer === "object" && answer !== null && HOST_RESULT_ENVELOPE_KEY in answer) {
    const envelope = answer as HostResultEnvelope;
    const attempt = envelope[HOST_RESULT_ENVELOPE_KEY]?.attempt;
    return { value: envelope.value ?? null, ...(typeof attempt === "number" ? { attempt } : {}) };
  }
  return { value: answer ?? null };
}

/** Host tools without a timeout policy may run this long per attempt (they heartbeat). */
export const DEFAULT_HOST_TIMEOUT_MS = 60 * 60_000;
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 60_000;
