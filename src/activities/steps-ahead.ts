/**
 * Where a finished call's result may be fed to its run's script before the workflow asks for the
 * next step: the seam the step accelerator plugs into. The durable core takes no step here
 * (`noStepsAhead`): the workflow feeds every result through its `advanceScript` local activity.
 * The speculative-steps accelerator (`stepsAheadIn`) feeds it to the run's warm isolate on this
 * worker, and the step travels back with the call's result for the workflow to adopt, defer or
 * discard (`SpeculativeSteps`); the workflow issues the same commands whichever it does.
 */
import type { Sandbox } from "../sandbox/index.ts";
import type { CallEvent, SpeculativeStep } from "../shared/index.ts";

export interface StepsAhead {
  /** The run's next step with this call's result, taken here; undefined when it can't be (no warm isolate). */
  take(runId: string, event: CallEvent, eventJson?: string): Promise<SpeculativeStep | undefined>;
  /**
   * The call ended without a step taken here (a failed attempt): until the workflow feeds `seq`,
   * no step of the run is taken ahead.
   */
  skipped(runId: string, seq: number): void;
}

/** The core: no step is taken beside a call. */
export const noStepsAhead: StepsAhead = {
  take: () => Promise.resolve(undefined),
  skipped: () => undefined,
};

/** The speculative-steps accelerator: steps taken in this worker's sandbox. */
export function stepsAheadIn(sandbox: Pick<Sandbox, "speculate" | "notSpeculated">): StepsAhead {
  return {
    take: (runId, event, eventJson) => sandbox.speculate(runId, event, eventJson),
    skipped: (runId, seq) => sandbox.notSpeculated(runId, seq),
  };
}
