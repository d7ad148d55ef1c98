/**
 * Keeps a stream of reports from becoming a stream of signals: per key, at most one send per
 * interval, and the last value offered is always sent (values in between are dropped, since
 * only the latest progress matters). A key's state goes once an interval passes with nothing new.
 */

export interface ProgressCoalescer<T> {
  /** Offers the latest value for `key`; it is sent now, or once the interval since the last send has passed. */
  offer(key: string, value: T): void;
  /** Sends `key`'s pending value now (after a send in flight), e.g. before the call it reports on ends. */
  flush(key: string): Promise<void>;
  /** Keys with a send pending or recent (for tests: the state is dropped once idle). */
  readonly size: number;
}

interface KeyState<T> {
  pending?: { value: T };
  lastSentAt: number;
  sending: boolean;
  /** The send in flight, if any. */
  inFlight?: Promise<void>;
  timer?: ReturnType<typeof setTimeout>;
}

/**
 * @example
 * const coalescer = createProgressCoalescer((key, value) => signalRun(key, value), 1000);
 * coalescer.offer("run_1/5", { progress: 40, total: 100 });
 */
export function createProgressCoalescer<T>(
  send: (key: string, value: T) => Promise<void>,
  intervalMs: number,
): ProgressCoalescer<T> {
  const keys = new Map<string, KeyState<T>>();

  function schedule(key: string, state: KeyState<T>): void {
    if (state.timer !== undefined || state.sending) return;
    const wait = state.lastSentAt + intervalMs - Date.now();
    if (wait <= 0 && state.pending) {
      fire(key, state);
      return;
    }
    state.timer = setTimeout(
      () => {
        state.timer = undefined;
        fire(key, state);
      },
      Math.max(0, wait),
    );
    // A pending report must not keep a worker that is shutting down alive.
    state.timer.unref?.();
  }

  function fire(key: string, state: KeyState<T>): void {
    const pending = state.pending;
    if (!pending) {
      keys.delete(key);
      return;
    }
    delete state.pending;
    state.sending = true;
    state.lastSentAt = Date.now();
    state.inFlight = (async () => {
      try {
        await send(key, pending.value);
      } catch {
        // Best effort: a report that could not be sent is dropped; the next one may get through.
      } finally {
        state.sending = false;
        state.inFlight = undefined;
        // Either what came meanwhile is sent, or the state goes, once the interval has passed.
        schedule(key, state);
      }
    })();
  }

  return {
    offer(key, value) {
      let state = keys.get(key);
      if (!state) {
        state = { lastSentAt: Number.NEGATIVE_INFINITY, sending: false };
        keys.set(key, state);
      }
      state.pending = { value };
      schedule(key, state);
    },
    async flush(key) {
      const state = keys.get(key);
      if (!state) return;
      await state.inFlight;
      if (!state.pending) return;
      clearTimeout(state.timer);
      state.timer = undefined;
      if (state.sending) await state.inFlight;
      else fire(key, state);
      await state.inFlight;
    },
    get size() {
      return keys.size;
    },
  };
}
