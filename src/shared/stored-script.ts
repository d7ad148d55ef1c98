/**
 * A stored script: a script saved for `workflows.<name>.start(...)` (the product calls it a
 * workflow), what a toolset pins by id (`wf_…`, the digest of name, script and toolset) and what
 * a child run is started from. The record workflow's type and id keep their first names
 * ("workflowScriptRecord", `wfscript/…`): Temporal finds open records by them.
 */
import type { PinnedToolset } from "./toolset.ts";

export const STORED_SCRIPT_RECORD_TYPE = "workflowScriptRecord";

export interface StoredScript {
  id: string;
  name: string;
  /** What the script does, in a sentence, when it was saved with one (`POST /v1/runs/{id}/save`). */
  description?: string;
  /** The script as JavaScript (types stripped), as runs take it. */
  script: string;
  /**
   * The script's declared input type, as TypeScript text, when it declares one: what
   * `workflows.<name>.start(input)` takes in the declarations of toolsets pinning it.
   */
  inputType?: string;
  scriptHash: string;
  toolsetId: string;
  toolset: PinnedToolset;
}

export function storedScriptWorkflowId(namespace: string, id: string): string {
  return `wfscript/${namespace}/${id}`;
}

/** Input of a `rewind.workflows.start` call once the stored script is loaded. */
export interface ChildRunPlan {
  workflow: StoredScript;
}
