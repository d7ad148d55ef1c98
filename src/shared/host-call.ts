/**
 * Input of a host-tool activity: the arguments and the call's trace context. The activity type
 * is the qualified tool name, and the idempotency key comes from the workflow id and activity
 * id (`<run_id>/<seq>`), so neither travels in the input.
 */
export interface HostCallInput {
  args: Record<string, unknown>;
  traceparent?: string;
}

/** Host tools without a timeout policy may run this long per attempt (they heartbeat). */
export const DEFAULT_HOST_TIMEOUT_MS = 60 * 60_000;
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 60_000;
