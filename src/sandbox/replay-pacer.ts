/**
 * Paces a cold replay's entries into the isolate. Replaying a journal feeds every recorded
 * completion again, one entry each; isolated-vm's async `apply` costs ~100 µs an entry (a hop
 * to its thread pool and back, and another for each host call), its `applySync` a few µs, with
 * the same call and the same microtask checkpoint after it. Synchronous entries hold Node's
 * event loop, which also serves the worker's other activities and their heartbeats, so the
 * pacer lets them run in slices of `sliceMs`, yielding to the event loop between slices, and
 * goes back to async entries for the rest of the replay once `heavyEntries` entries took
 * `heavyEntryMs` of CPU each (a script that computes much per completion gains nothing from the
 * shortcut; one slow entry alone may be a garbage collection). No synchronous entry holds the
 * loop past `capMs`: one that would is stopped, and the replay is made again from the start with
 * async entries only (the script is deterministic, so it replays to the same state).
 */
import { threadCpuMs } from "./isolate.ts";

export interface PacerOptions {
  /** Synchronous work between two yields to the event loop, in ms. */
  sliceMs: number;
  /** An entry that took this much CPU time is heavy, in ms. */
  heavyEntryMs: number;
  /** Heavy entries that end synchronous entries for the rest of the replay. */
  heavyEntries: number;
  /** Wall time past which a synchronous entry is stopped (and the replay made again), in ms. */
  capMs: number;
  /** False: every entry on isolated-vm's threads, from the first (a replay made again after a cut). */
  synchronous?: boolean;
}

export const DEFAULT_PACING: PacerOptions = { sliceMs: 10, heavyEntryMs: 50, heavyEntries: 2, capMs: 100 };

export class ReplayPacer {
  private sliceStart = performance.now();
  private synchronous: boolean;
  private heavy = 0;
  private readonly options: PacerOptions;
  private readonly clock: (() => number) | undefined;

  /** `clock` reads CPU time in ms (default: this thread's, else the isolate's given to `enter`). */
  constructor(options: PacerOptions = DEFAULT_PACING, clock: (() => number) | undefined = threadCpuMs) {
    this.options = options;
    this.clock = clock;
    this.synchronous = options.synchronous ?? true;
  }

  /** See {@link PacerOptions.capMs}. */
  get capMs(): number {
    return this.options.capMs;
  }

  /** Whether the next entry may run on the calling thread. */
  get sync(): boolean {
    return this.synchronous;
  }

  /** Whether the slice is used up: the caller awaits {@link yield} before its next entry. */
  get due(): boolean {
    return this.synchronous && performance.now() - this.sliceStart >= this.options.sliceMs;
  }

  /** Lets the event loop run (timers, I/O, other steps), then starts a new slice. */
  async yield(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.sliceStart = performance.now();
  }

  /** Runs one synchronous entry and notes the CPU time it took; `isolateCpuMs` is the fallback clock. */
  enter<T>(entry: () => T, isolateCpuMs: () => number): T {
    const clock = this.clock ?? isolateCpuMs;
    const began = clock();
    try {
      return entry();
    } finally {
      if (clock() - began >= this.options.heavyEntryMs && ++this.heavy >= this.options.heavyEntries)
        this.synchronous = false;
    }
  }
}
