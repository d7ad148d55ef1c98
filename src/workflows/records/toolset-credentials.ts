/**
 * A toolset's credentials in a namespace, kept sealed in an entity workflow: the toolset's own
 * and each end user's. Updates write them (one scope at a time, never merged); a query reads
 * the sealed values for the dispatching activity, which alone can open them.
 */
import { condition, continueAsNew, setHandler, workflowInfo } from "@temporalio/workflow";

import type { StoredCredentials } from "../../shared/index.ts";
import { getCredentialsQuery, setCredentialsUpdate } from "./toolset-credentials-messages.ts";

export async function toolsetCredentials(initial: StoredCredentials): Promise<void> {
  const state: StoredCredentials = {
    endUsers: { ...initial.endUsers },
    revision: initial.revision,
    ...(initial.toolset ? { toolset: initial.toolset } : {}),
  };
  setHandler(getCredentialsQuery, () => state);
  setHandler(setCredentialsUpdate, ({ endUser, sealed }) => {
    if (endUser === undefined) state.toolset = sealed;
    // Defined, not assigned: an end user called "__proto__" is a key like any other.
    else
      Object.defineProperty(state.endUsers, endUser, {
        value: sealed,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    state.revision += 1;
    return { revision: state.revision };
  });
  await condition(() => workflowInfo().continueAsNewSuggested);
  await continueAsNew<typeof toolsetCredentials>(state);
}
