/**
 * Local activities that look things up for the run workflow, which can't do I/O itself: the
 * stored script a `workflows.<name>.start` call starts, and which namespace a run
 * belongs to (a script may signal only runs of its own namespace).
 */
import { WorkflowNotFoundError, type Client } from "@temporalio/client";
import { SEARCH_ATTRIBUTES } from "../shared/index.ts";
import type { StoredScript } from "../shared/index.ts";
import type { StoredScriptStore } from "../storage/index.ts";

export interface RunLookupDeps {
  client: Client;
  storedScripts: StoredScriptStore;
}

export function createRunLookups(deps: RunLookupDeps) {
  return {
    async loadStoredWorkflow(input: { namespace: string; id: string }): Promise<StoredScript | null> {
      return (await deps.storedScripts.load(input.namespace, input.id)) ?? null;
    },
    async runNamespace(input: { runId: string }): Promise<string | null> {
      try {
        const description = await deps.client.workflow.getHandle(input.runId).describe();
        return description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.namespace) ?? null;
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return null;
        throw error;
      }
    },
  };
}
