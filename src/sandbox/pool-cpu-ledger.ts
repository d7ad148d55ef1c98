/**
 * The CPU time a script's isolate really used, for the step's CPU limit. isolated-vm's own
 * `isolate.cpuTime` is read off a wall clock while the isolate runs, so a busy machine stretches
 * it (measured here: 4.4 s "CPU" for 1.4 s of its thread's CPU time beside four busy processes),
 * and a limit checked on it fails well-behaved scripts whenever another tenant keeps the cores
 * busy. An isolate entered asynchronously runs on one of isolated-vm's pool threads, which this
 * process can't tell apart, but the kernel says of every thread how long it ran on a CPU and how
 * long it waited, runnable, for one (`/proc/self/task/<tid>/schedstat`). Every `POLL_MS` while
 * entries are under way, this ledger reads those counts and takes the interval's share — time on
 * a CPU over time runnable, across the process's threads that computed — and charges each isolate the wall
 * time it ran (`isolate.wallTime` grows only while it executes) times that share: an isolate is
 * charged for the CPU it got, not for the time it waited for a core.
 * An entry over its CPU allowance is told at once (`onOverBudget`), and its isolate is stopped.
 *
 * Where the kernel's counts can't be read (not Linux), an isolate is charged its wall time while
 * running, as isolated-vm does.
 */
import { readFileSync, readdirSync } from "node:fs";
import type ivm from "isolated-vm";

/** How often the pool's CPU time is read while an entry is under way, in ms. */
export const POLL_MS = 20;

export interface MeteredEntry {
  /** Whether the entry went over its allowance (and `onOverBudget` ran). */
  readonly overBudget: boolean;
  /** Ends the entry; returns the CPU time charged to it, in ms. */
  end(): number;
}

interface Open {
  isolate: ivm.Isolate;
  allowanceMs: number;
  onOverBudget: () => void;
  /** The isolate's wall time when last charged, in ns. */
  wallNs: bigint;
  chargedMs: number;
  over: boolean;
}

const wallNsOf = (isolate: ivm.Isolate): bigint => (isolate.isDisposed ? 0n : isolate.wallTime);

/** Nanoseconds the process's busy threads spent on a CPU, and waiting runnable for one, in an interval. */
export interface RunCounts {
  runningNs: number;
  waitingNs: number;
}

/**
 * Reads the kernel's counts of every thread of this process, and returns those of the interval
 * since the last reading, summed over the threads that were runnable for at least half of it: the
 * threads that compute, as an isolate that runs does. (A thread that wakes now and then is given a
 * core sooner than one that computes, so counting it would flatter the share.) Undefined where the
 * counts can't be read.
 */
function processRunCounts(): (() => RunCounts | undefined) | undefined {
  try {
    readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8");
  } catch {
    return undefined;
  }
  /** What each thread had at the last reading: a thread that ended takes its counts with it. */
  let last = new Map<string, { runningNs: number; waitingNs: number }>();
  let lastAt = performance.now();
  return () => {
    const now = new Map<string, { runningNs: number; waitingNs: number }>();
    const at = performance.now();
    const intervalNs = (at - lastAt) * 1e6;
    let tids: string[];
    try {
      tids = readdirSync("/proc/self/task");
    } catch {
      return undefined;
    }
    const busy: RunCounts = { runningNs: 0, waitingNs: 0 };
    for (const tid of tids) {
      let fields: string[];
      try {
        fields = readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ");
      } catch {
        continue; // ended between listing and reading
      }
      const counts = { runningNs: Number(fields[0]), waitingNs: Number(fields[1]) };
      now.set(tid, counts);
      const before = last.get(tid);
      if (!before) continue;
      const running = counts.runningNs - before.runningNs;
      const waiting = counts.waitingNs - before.waitingNs;
      if (running + waiting < intervalNs / 2) continue;
      busy.runningNs += running;
      busy.waitingNs += waiting;
    }
    last = now;
    lastAt = at;
    return busy;
  };
}

export class PoolCpuLedger {
  private readonly open = new Set<Open>();
  private readonly readCounts: (() => RunCounts | undefined) | undefined;
  /** Time on a CPU over time runnable, in the last interval read (1 where unknown). */
  private ratio = 1;
  private timer: ReturnType<typeof setInterval> | undefined;
  /** Whether the next reading is the first since the timer started. */
  private fresh = true;

  constructor(readCounts: (() => RunCounts | undefined) | undefined = processRunCounts()) {
    this.readCounts = readCounts;
  }

  /** Whether charges come from the kernel's counts (false: wall time while running). */
  get measuresCpu(): boolean {
    return this.readCounts !== undefined;
  }

  /**
   * Starts charging `isolate` for an entry under way on isolated-vm's threads. Past
   * `allowanceMs` of CPU, `onOverBudget` runs (once): it is expected to stop the isolate.
   */
  begin(isolate: ivm.Isolate, allowanceMs: number, onOverBudget: () => void): MeteredEntry {
    const entry: Open = { isolate, allowanceMs, onOverBudget, wallNs: wallNsOf(isolate), chargedMs: 0, over: false };
    this.open.add(entry);
    // Nothing is read here: an entry costs a Set insertion. The first reading after the timer
    // starts only sets where the counts stand (what it counts since the last reading is a quiet
    // time's, which says nothing of this one); what runs before the next is charged at the last share.
    if (!this.timer) {
      this.fresh = true;
      this.timer = setInterval(() => this.poll(), POLL_MS);
      this.timer.unref();
    }
    return {
      get overBudget() {
        return entry.over;
      },
      end: () => {
        // What ran since the last reading is charged at the last interval's rate.
        const wall = wallNsOf(entry.isolate);
        if (wall > entry.wallNs) entry.chargedMs += (Number(wall - entry.wallNs) / 1e6) * this.ratio;
        entry.wallNs = wall;
        this.open.delete(entry);
        if (this.open.size === 0 && this.timer) {
          clearInterval(this.timer);
          this.timer = undefined;
        }
        return entry.chargedMs;
      },
    };
  }

  private poll(): void {
    const ran = [...this.open].map((entry) => {
      const wall = wallNsOf(entry.isolate);
      const ranNs = wall > entry.wallNs ? Number(wall - entry.wallNs) : 0;
      entry.wallNs = wall;
      return { entry, ranNs };
    });
    const counts = this.readCounts?.();
    const baseline = this.fresh;
    this.fresh = false;
    // Under a millisecond of computing says nothing of the machine: keep the last share.
    const runnable = counts ? counts.runningNs + counts.waitingNs : 0;
    if (counts && !baseline && runnable >= 1e6) this.ratio = Math.min(1, Math.max(0, counts.runningNs / runnable));
    for (const { entry, ranNs } of ran) {
      entry.chargedMs += (ranNs / 1e6) * this.ratio;
      if (!entry.over && entry.chargedMs > entry.allowanceMs) {
        entry.over = true;
        entry.onOverBudget();
      }
    }
  }
}

/** The process's ledger: isolated-vm's pool is one per process. */
export const poolCpuLedger = new PoolCpuLedger();
