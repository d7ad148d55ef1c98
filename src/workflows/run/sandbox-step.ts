/**
 * A step of the script in the sandbox, through the `advanceScript` local activity on the worker
 * running the workflow task: warm when that worker holds the run's isolate fed exactly what the
 * journal has (the chain matches), else cold, replaying the journal into a fresh isolate.
 */
import { ActivityFailure, ApplicationFailure, proxyLocalActivities } from "@temporalio/workflow";
import type { Activities } from "../../activities/index.ts";
import { MACHINE_BUSY_ERROR_TYPE, RUNTIME_VERSION_ERROR_TYPE } from "../../shared/index.ts";
import type { AdvanceInput, AdvanceResult } from "../../shared/index.ts";
import { PATCHES } from "./patches.ts";
import { isPatched } from "./run-patches.ts";

const { advanceScript: advanceOnThisWorker } = proxyLocalActivities<Activities>({
  startToCloseTimeout: "5 minutes",
  retry: { maximumAttempts: 3, initialInterval: "200ms", nonRetryableErrorTypes: [RUNTIME_VERSION_ERROR_TYPE] },
});

/**
 * One `advanceScript`. Two refusals of a step are not the run's failure: a worker without the
 * run's sandbox runtime (a run of a newer release, on an older worker), and a machine too busy to
 * give the step its CPU time past the local activity's attempts. Each fails the workflow task
 * rather than the run, so Temporal retries it until a worker that has the runtime, or the CPU,
 * takes it. A local activity's failure reaches the workflow as the activity's own
 * ApplicationFailure (an ActivityFailure around it is matched too).
 */
export async function advanceScript(input: AdvanceInput): Promise<AdvanceResult> {
  try {
    return await advanceOnThisWorker(input);
  } catch (error) {
    const refusal = error instanceof ActivityFailure ? error.cause : error;
    if (!(refusal instanceof ApplicationFailure)) throw error;
    // No history before this type existed holds it: no patch is needed.
    if (refusal.type === MACHINE_BUSY_ERROR_TYPE) throw new Error(refusal.message);
    if (
      refusal.type === RUNTIME_VERSION_ERROR_TYPE &&
      (error instanceof ActivityFailure || isPatched(PATCHES.runtimeRefusalFailsTheTask))
    )
      throw new Error(refusal.message);
    throw error;
  }
}

export function refusedColdStart(): ApplicationFailure {
  return ApplicationFailure.nonRetryable("the sandbox refused a cold start");
}

/** A step warm if this worker can, else cold from what `coldStart` gives for the batches consumed. */
export async function takeStep(
  base: Omit<AdvanceInput, "cold">,
  coldStart: (consumedBatches: number) => NonNullable<AdvanceInput["cold"]>,
): Promise<AdvanceResult> {
  const warm = await advanceScript(base);
  if (warm.kind !== "needsColdStart") return warm;
  const result = await advanceScript({ ...base, cold: coldStart(base.consumedBatches) });
  if (result.kind === "needsColdStart") throw refusedColdStart();
  return result;
}
