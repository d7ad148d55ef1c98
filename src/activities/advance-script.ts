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
  /** The task queue only this worker polls, told with each step it takes (`StepPlace`). */
  sessionQueue?: string | undefined;
  /** Opens the MCP sessions of the calls a run's first step issued (`AdvanceInput.openSessionsWith`). */
  openSessions?: OpenSessions;
}

/** A step's result with the queue of the worker that now holds the run's isolate, when it has one. */
export function placed<T extends AdvanceResult>(result: T, sessionQueue: string | undefined): T {
  return result.kind === "needsColdStart" || sessionQueue === undefined ? result : { ...result, sessionQueue };
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
    const result = await withEventsEndpoint(stepped, input.namespace, deps.endpoints);
    return placed(result, deps.sessionQueue);
  };
}
