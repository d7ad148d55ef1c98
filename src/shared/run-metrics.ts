/**
 * The run workflow's metrics sink: how a run's start, end and parked calls leave the workflow
 * sandbox for the worker's metrics (src/workflows/run-metrics-interceptor.ts calls it; the worker
 * records). A sink is not called when a workflow replays, so each fact is counted once, by the
 * worker that lived it.
 */
import type { Sinks } from "@temporalio/workflow";

export type RunEndOutcome = "completed" | "failed" | "cancelled";

export interface RunMetricsSinks extends Sinks {
  runMetrics: {
    started(): void;
    /** `failure`: the failure type of a failed run (ScriptFailed, LimitExceeded, ScriptStuck, or `other`). */
    ended(outcome: RunEndOutcome, failure?: string): void;
    continued(): void;
    parked(reason: string): void;
  };
}
