/**
 * The `advanceScript` local activity: one step of a run's script in the sandbox. It runs as a
 * local activity because it is pure computation on the worker that holds the warm isolate,
 * and its result is recorded in history as a marker, so replays never run the script again.
 */
import type { EndpointResolver } from "../events/index.ts";
import type { Sandbox } from "../sandbox/index.ts";
import type { AdvanceInput, AdvanceResult } from "../shared/index.ts";
import { withEventsEndpoint } from "./run-end.ts";
import type { OpenSessions } from "./session-opener.ts";

export interface AdvanceDeps {
  sandbox: Sandbox;
  endpoints: EndpointResolver;
  /** Opens the MCP sessions of the calls a run's first step issued (`AdvanceInput.openSessionsWith`). */
  openSessions?: OpenSessions;
}

export function createAdvanceScript(deps: AdvanceDeps) {
  return async function advanceScript(input: AdvanceInput): Promise<AdvanceResult> {
    const stepped = await deps.sandbox.advance(input);
    if (input.openSessionsWith && input.cold && stepped.kind !== "needsColdStart")
      deps.openSessions?.({
        runId: input.runId,
        credentials: input.openSessionsWith,
        toolset: input.cold.toolset,
        calls: stepped.calls,
      });
    return withEventsEndpoint(stepped, input.namespace, deps.endpoints);
  };
}
