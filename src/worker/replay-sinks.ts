/**
 * The sinks the run workflows call, each doing nothing, for replaying a history outside a worker
 * (`Worker.runReplayHistory`, the replay corpus, the bench). Temporal does not call a sink again
 * on replay, but a workflow that names one the replayer lacks is logged as "referenced an
 * unregistered external sink" at every activation: the replayer must know them all.
 */
import type { InjectedSinks } from "@temporalio/worker";
import type { ObservationSinks, RunMetricsSinks, TracingSinks } from "../shared/index.ts";

const ignore = { fn: () => undefined };

export const REPLAY_SINKS: InjectedSinks<TracingSinks & RunMetricsSinks & ObservationSinks> = {
  tracing: { span: ignore },
  runMetrics: { started: ignore, ended: ignore, continued: ignore, parked: ignore },
  observations: { observed: ignore },
};
