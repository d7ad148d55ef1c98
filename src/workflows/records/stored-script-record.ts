/**
 * A stored workflow script, kept like a toolset: an open workflow whose start input is the
 * record, read back from its first history event without a worker.
 */
import { condition } from "@temporalio/workflow";
import type { StoredWorkflow } from "../../shared/stored-script.ts";

export async function workflowScriptRecord(_input: { namespace: string; record: StoredWorkflow }): Promise<void> {
  await condition(() => false);
}
