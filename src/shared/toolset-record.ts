/**
 * How a registered toolset is stored: the workflow type and id of its record, and the record's
 * input. Shared by the store (which writes and reads it) and the workflow (which keeps it open).
 */
import type { PinnedToolset } from "./toolset.ts";

export const TOOLSET_WORKFLOW_TYPE = "toolsetRecord";

export interface ToolsetRecordInput {
  id: string;
  namespace: string;
  document: PinnedToolset;
  registeredAt: string;
}

/** Toolsets are content-addressed, but each namespace registers (and later credits) its own. */
export function toolsetWorkflowId(namespace: string, id: string): string {
  return `toolset/${namespace}/${id}`;
}
