/**
 * The worker's side of the run workflow's metrics sink (src/shared/run-metrics.ts): what the
 * workflow interceptor reports leaves the sandbox here and is recorded. Not called on replay.
 */
import type { InjectedSinks } from "@temporalio/worker";
import type { RunMetrics } from "../metrics/index.ts";
import type { RunMetricsSinks } from "../shared/index.ts";

export function runMetricsSinks(metrics: RunMetrics): InjectedSinks<RunMetricsSinks> {
  return {
    runMetrics: {
      started: { fn: () => metrics.runStarted() },
      ended: { fn: (_info, outcome, failure) => metrics.runEnded(outcome, failure) },
      continued: { fn: () => metrics.runContinued() },
      parked: { fn: (_info, reason) => metrics.callParked(reason) },
    },
  };
}
