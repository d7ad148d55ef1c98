/**
 * Runs one JSON-RPC request under a deadline and a watch, so that when it fails the caller knows
 * what happened on the wire (see http-observer.ts), and a response stream that broke ends the
 * request at once instead of at its timeout. The SDK's own request timer is only a backstop: our
 * deadline decides, and tells "timed out" from "cancelled by the caller" without reading messages.
 */
import { requestScope, type RequestWatch } from "./http-observer.ts";
import { linkSignals } from "./linked-signal.ts";

export interface Deadline {
  /** Aborts when the time is up or the caller's signal aborts. */
  readonly signal: AbortSignal;
  readonly expired: boolean;
  readonly cancelled: boolean;
  /** Milliseconds left, at least 1. */
  remaining(): number;
  dispose(): void;
}

export function startDeadline(timeoutMs: number, caller?: AbortSignal): Deadline {
  const controller = new AbortController();
  const endsAt = Date.now() + timeoutMs;
  let expired = false;
  let cancelled = false;
  const onCallerAbort = () => {
    if (controller.signal.aborted) return;
    cancelled = true;
    controller.abort(new Error("cancelled by the caller"));
  };
  const timer = setTimeout(
    () => {
      if (controller.signal.aborted) return;
      expired = true;
      controller.abort(new Error(`timed out after ${timeoutMs} ms`));
    },
    Math.max(1, timeoutMs),
  );
  if (caller?.aborted) onCallerAbort();
  else caller?.addEventListener("abort", onCallerAbort, { once: true });
  return {
    signal: controller.signal,
    get expired() {
      return expired;
    },
    get cancelled() {
      return cancelled;
    },
    remaining: () => Math.max(1, endsAt - Date.now()),
    dispose() {
      clearTimeout(timer);
      caller?.removeEventListener("abort", onCallerAbort);
    },
  };
}

/** A watched request that failed: the error as the SDK threw it, and what the wire showed. */
export class WatchedFailure extends Error {
  override name = "WatchedFailure";
  readonly error: unknown;
  readonly watch: RequestWatch;
  /** The response stream ended or broke before the answer. */
  readonly broken: Error | undefined;
  readonly expired: boolean;
  readonly cancelled: boolean;

  constructor(error: unknown, watch: RequestWatch, broken: Error | undefined, deadline: Deadline) {
    super(error instanceof Error ? error.message : String(error));
    this.error = error;
    this.watch = watch;
    this.broken = broken;
    this.expired = deadline.expired;
    this.cancelled = deadline.cancelled;
  }
}

/**
 * Sends one request through `send` (which must pass the given signal to the SDK) with its HTTP
 * exchanges attributed to a fresh watch. Throws `WatchedFailure` on any failure.
 */
export async function watched<T>(deadline: Deadline, send: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const own = new AbortController();
  const linked = linkSignals([deadline.signal, own.signal]);
  let broken: Error | undefined;
  let markBroken: (error: Error) => void = () => undefined;
  const brokenPromise = new Promise<never>((_, reject) => {
    markBroken = reject;
  });
  brokenPromise.catch(() => undefined);
  const watch: RequestWatch = {
    sent: false,
    requestId: undefined,
    resumable: false,
    answered: false,
    settled: false,
    signal: linked.signal,
    afterSettled: [],
    onBroken(error) {
      if (watch.settled || broken !== undefined) return;
      broken = error;
      markBroken(error);
    },
  };
  try {
    return await requestScope.run(watch, () => Promise.race([send(watch.signal), brokenPromise]));
  } catch (error) {
    // The SDK still waits for an answer to a request whose stream broke: aborting its signal
    // drops its handler and timer and sends `notifications/cancelled` to the server.
    if (broken !== undefined) own.abort(broken);
    throw new WatchedFailure(error, watch, broken, deadline);
  } finally {
    watch.settled = true;
    linked.unlink();
    for (const release of watch.afterSettled.splice(0)) release();
  }
}
