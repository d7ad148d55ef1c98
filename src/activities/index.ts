/** Every activity of the Rewind worker, built from its dependencies. */
import { createAdvanceScript, type AdvanceDeps } from "./advance-script.ts";

export type ActivityDeps = AdvanceDeps;

export function createActivities(deps: ActivityDeps) {
  return {
    advanceScript: createAdvanceScript(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
