/**
 * Sizes of the scenarios that measure Rewind at scale — large toolsets, large payloads and long
 * runs, two worker processes — full and `--quick`. Kept beside context.ts's `Sizes` and chosen
 * by which of its two tables the run uses, so `--quick` shrinks these too.
 */
import { QUICK, type Sizes } from "./context.ts";

export interface ScaleSizes {
  largeToolset: {
    smallTools: number;
    largeTools: number;
    /** `POST /v1/toolsets` samples of each server (after one first registration each). */
    registrations: number;
    warmChecks: number;
    /** Calls per run and rounds, sequential and in 16 lanes, each after one warm-up round. */
    n: number;
    rounds: number;
    parallelN: number;
    parallelRounds: number;
  };
  payloads: {
    /** Bytes each call answers, calls per run, runs per side (after one warm-up round). */
    bytes: number;
    calls: number;
    rounds: number;
    /** Run lengths (echo calls, 16 lanes) whose history bytes per call are compared. */
    lengths: number[];
  };
  twoWorkers: { n: number; rounds: number; parallelN: number; parallelRounds: number };
}

const FULL_SCALE: ScaleSizes = {
  largeToolset: {
    smallTools: 10,
    largeTools: 1000,
    registrations: 9,
    warmChecks: 30,
    n: 50,
    rounds: 9,
    parallelN: 50,
    parallelRounds: 21,
  },
  payloads: { bytes: 1_000_000, calls: 10, rounds: 7, lengths: [100, 1000, 10_000] },
  twoWorkers: { n: 50, rounds: 5, parallelN: 50, parallelRounds: 21 },
};

const QUICK_SCALE: ScaleSizes = {
  largeToolset: {
    smallTools: 10,
    largeTools: 1000,
    registrations: 3,
    warmChecks: 5,
    n: 10,
    rounds: 1,
    parallelN: 32,
    parallelRounds: 2,
  },
  payloads: { bytes: 1_000_000, calls: 3, rounds: 1, lengths: [32, 160] },
  twoWorkers: { n: 10, rounds: 1, parallelN: 32, parallelRounds: 2 },
};

export function scaleSizes(sizes: Sizes): ScaleSizes {
  return sizes === QUICK ? QUICK_SCALE : FULL_SCALE;
}
