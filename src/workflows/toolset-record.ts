/**
 * A registered toolset, kept in Temporal (the only stateful dependency) as a workflow that
 * stays open: its start input is the pinned document, so the document lives as long as the
 * workflow and is read back from the first history event without needing a worker.
 */
import { condition } from "@temporalio/workflow";
import type { ToolsetRecordInput } from "../shared/toolset-record.ts";

export async function toolsetRecord(_input: ToolsetRecordInput): Promise<void> {
  // Open for good: a closed workflow would be deleted after the namespace's retention period.
  await condition(() => false);
}
