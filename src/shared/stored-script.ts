/**
 * A workflow script stored for `workflows.<name>.start(...)`: what a toolset pins by id
 * (`wf_…`, the digest of name, script and toolset) and what a child run is started from.
 */
import type { PinnedToolset } from "./toolset.ts";

export const WORKFLOW_SCRIPT_RECORD_TYPE = "workflowScriptRecord";

export interface StoredWorkflow {
  id: string;
  name: string;
  /** The script as JavaScript (types stripped), as runs take it. */
  script: string;
  scriptHash: string;
  toolsetId: string;
  toolset: PinnedToolset;
}

export function workflowScriptWorkflowId(namespace: string, id: string): string {
  return `wfscript/${namespace}/${id}`;
}

/** Input of a `rewind.workflows.start` call once the workflow script is loaded. */
export interface ChildRunPlan {
  workflow: StoredWorkflow;
}
