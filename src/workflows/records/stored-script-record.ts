/**
 * A stored script (what the product calls a workflow), kept like a toolset: an open workflow
 * whose start input is the record, read back from its first history event without a worker.
 */
import { condition } from "@temporalio/workflow";
import type { StoredScript } from "../../shared/index.ts";

/**
 * The exported name is the workflow type Temporal knows open records by (STORED_SCRIPT_RECORD_TYPE):
 * it keeps its first name, "workflowScriptRecord", so stored scripts stay readable and replayable.
 */
export async function workflowScriptRecord(_input: { namespace: string; record: StoredScript }): Promise<void> {
  await condition(() => false);
}
