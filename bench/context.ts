/**
 * What every scenario gets: the running stack, how big to make its rounds (full or `--quick`),
 * and a logger for progress lines.
 */
import type { BenchStack } from "./stack.ts";

export interface Sizes {
  /** Rounds per mode: a 16-lane round is short and noisy, so it gets more of them. */
  overhead: { n: number; rounds: number; parallelRounds: number };
  scaling: { n: number; rounds: number }[];
  sandbox: { warmSteps: number; coldSizes: number[]; coldRounds: number };
  typeCheck: { coldRounds: number; warmChecks: number };
  start: { warmup: number; samples: number };
  /** Rewind and plain side by side at `runs` each; then `completionRuns` concurrent Rewind runs must all complete. */
  /** `beside`: also measure the pair as `npm start` runs it (API beside the worker, both started eagerly). */
  throughput: { runs: number; calls: number; rounds: number; completionRuns: number; beside: boolean };
  /** Runs that call once then sleep until `sleepSec` after the first start; POSTs in flight at once. */
  idle: { runs: number; sleepSec: number; postConcurrency: number };
  replay: { sizes: [number, number]; rounds: number };
  /** Result sizes in bytes, each with the calls of one run; every size gets `rounds` runs. */
  largeResults: { sizes: { bytes: number; calls: number }[]; rounds: number };
}

export const FULL: Sizes = {
  overhead: { n: 50, rounds: 5, parallelRounds: 21 },
  scaling: [
    { n: 10, rounds: 5 },
    { n: 100, rounds: 3 },
    { n: 1000, rounds: 1 },
    { n: 5000, rounds: 1 },
  ],
  sandbox: { warmSteps: 5000, coldSizes: [10, 100, 1000, 5000], coldRounds: 5 },
  typeCheck: { coldRounds: 5, warmChecks: 50 },
  start: { warmup: 3, samples: 25 },
  throughput: { runs: 200, calls: 10, rounds: 3, completionRuns: 1000, beside: true },
  idle: { runs: 10_000, sleepSec: 900, postConcurrency: 32 },
  replay: { sizes: [5, 200], rounds: 7 },
  largeResults: {
    sizes: [
      { bytes: 1_000, calls: 20 },
      { bytes: 100_000, calls: 20 },
      { bytes: 1_000_000, calls: 10 },
      { bytes: 10_000_000, calls: 5 },
    ],
    rounds: 5,
  },
};

export const QUICK: Sizes = {
  overhead: { n: 20, rounds: 2, parallelRounds: 4 },
  scaling: [
    { n: 10, rounds: 2 },
    { n: 100, rounds: 1 },
    { n: 300, rounds: 1 },
  ],
  sandbox: { warmSteps: 300, coldSizes: [10, 100, 300, 5000], coldRounds: 2 },
  typeCheck: { coldRounds: 2, warmChecks: 10 },
  start: { warmup: 1, samples: 8 },
  throughput: { runs: 30, calls: 10, rounds: 1, completionRuns: 50, beside: false },
  idle: { runs: 100, sleepSec: 15, postConcurrency: 32 },
  replay: { sizes: [3, 20], rounds: 2 },
  largeResults: {
    sizes: [
      { bytes: 1_000, calls: 5 },
      { bytes: 100_000, calls: 5 },
      { bytes: 1_000_000, calls: 3 },
      { bytes: 10_000_000, calls: 2 },
    ],
    rounds: 1,
  },
};

export interface BenchContext {
  stack: BenchStack;
  sizes: Sizes;
  log(line: string): void;
}
