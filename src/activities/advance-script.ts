/**
 * The `advanceScript` local activity: one step of a run's script in the sandbox. It runs as a
 * local activity because it is pure computation on the worker that holds the warm isolate,
 * and its result is recorded in history as a marker, so replays never run the script again.
 */
import type { Sandbox } from "../sandbox/index.ts";
import type { AdvanceInput, AdvanceResult } from "../shared/step.ts";

export interface AdvanceDeps {
  sandbox: Sandbox;
}

export function createAdvanceScript(deps: AdvanceDeps) {
  return async function advanceScript(input: AdvanceInput): Promise<AdvanceResult> {
    return deps.sandbox.advance(input);
  };
}
