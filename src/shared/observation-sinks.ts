/**
 * The sink a run hands the result shapes it observes to (see workflows/run/observations.ts):
 * the worker passes each report on to the toolset's record as a signal. Through a sink the run
 * issues no command, so an observation costs it no workflow task, and a run never waits for one
 * before it ends. Temporal does not call a sink again when it replays a run.
 */
import type { Sinks } from "@temporalio/workflow";

export interface ObservedResultReport {
  /** The toolset record's workflow id. */
  recordId: string;
  tool: string;
  shape: Record<string, unknown>;
  /** Results of this shape seen since the last report. */
  count: number;
}

export interface ObservationSinks extends Sinks {
  observations: { observed(report: ObservedResultReport): void };
}
