/**
 * Isolate shells built ahead of the runs that need them: building one (isolate, context,
 * runtime compiled) is most of what a run's first step pays before its script starts. The pool
 * keeps up to `size` of them and builds them one at a time while its owner is idle (no step in
 * progress), each `BUILD_DELAY_MS` after the last take or build, so building never delays a step,
 * nor the rest of the run that just took a shell (its start, its first workflow task and call,
 * all on this thread); a take from an empty pool builds its shell on the spot. Each shell is
 * handed out once and never given back, so a run's isolate has only ever held that run; each has
 * the sandbox's heap limit.
 */
import { createIsolateShell, type IsolateShell } from "./isolate-shell.ts";

/**
 * Wait before building the next shell. Building one takes this thread about 2 ms; built at once
 * after a take, it landed in the middle of the run that took the shell (the bench's start
 * scenario, `POST /v1/runs` → first call: medians 30.7 ms at once, 28.6 ms after 50 ms, three
 * runs each).
 */
const BUILD_DELAY_MS = 50;

export interface IsolatePoolOptions {
  /** Shells kept ready; 0 builds every shell on demand. */
  size: number;
  memoryMb: number;
  /** Whether the pool may build now; checked before each shell (default: always). */
  idle?: () => boolean;
}

export interface IsolatePool {
  /** A ready shell if there is one, else one built now. */
  take(): Promise<IsolateShell>;
  /** Builds shells up to the size, one after another while the owner is idle. */
  refill(): void;
  /** Shells ready now. */
  readonly ready: number;
  /** Resolves when the pool is full, disposed, or stops building (its owner is busy). */
  filled(): Promise<void>;
  /** Disposes the ready shells and any being built; later `take`s build their own. */
  dispose(): void;
}

export function createIsolatePool(options: IsolatePoolOptions): IsolatePool {
  const ready: IsolateShell[] = [];
  let building = false;
  let disposed = false;
  let waiters: (() => void)[] = [];

  const full = (): boolean => disposed || ready.length >= options.size;
  const wake = (): void => {
    const woken = waiters;
    waiters = [];
    for (const resolve of woken) resolve();
  };

  const idle = options.idle ?? (() => true);
  const refill = (): void => {
    if (building || full()) return;
    building = true;
    setTimeout(() => {
      if (disposed || !idle()) {
        building = false;
        return wake();
      }
      createIsolateShell(options.memoryMb).then(
        (shell) => {
          building = false;
          if (disposed) shell.isolate.dispose();
          else ready.push(shell);
          if (full()) wake();
          refill();
        },
        () => {
          // Building failed (e.g. the process is out of memory): the pool stays short until the next refill.
          building = false;
          wake();
        },
      );
    }, BUILD_DELAY_MS);
  };

  refill();
  return {
    async take() {
      return ready.shift() ?? createIsolateShell(options.memoryMb);
    },
    refill,
    get ready() {
      return ready.length;
    },
    filled() {
      if (full() || !building) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
    dispose() {
      disposed = true;
      for (const shell of ready.splice(0)) shell.isolate.dispose();
      wake();
    },
  };
}
