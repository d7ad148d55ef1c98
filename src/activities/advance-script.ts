/**
 * The `advanceScript` local activity: one step of a run's script in the sandbox. It runs as a
 * local activity because it is pure computation on the worker that holds the warm isolate,
 * and its result is recorded in history as a marker, so replays never run the script again.
 * The step that ends a run also says whether the run's namespace has an events endpoint, so
 * the workflow skips delivery workflows that would have nowhere to deliver.
 */
import type { EndpointResolver } from "../events/endpoint-resolver.ts";
import type { Sandbox } from "../sandbox/index.ts";
import type { AdvanceInput, AdvanceResult } from "../shared/step.ts";

export interface AdvanceDeps {
  sandbox: Sandbox;
  endpoints: EndpointResolver;
}

export function createAdvanceScript(deps: AdvanceDeps) {
  return async function advanceScript(input: AdvanceInput): Promise<AdvanceResult> {
    const result = await deps.sandbox.advance(input);
    if ((result.kind === "done" || result.kind === "failed") && input.namespace !== undefined) {
      // Unknown (the lookup failed) means deliver: the delivery workflow looks again.
      const endpoint = await deps.endpoints.resolve(input.namespace).then((found) => found !== undefined, () => undefined);
      if (endpoint !== undefined) return { ...result, eventsEndpoint: endpoint };
    }
    return result;
  };
}
