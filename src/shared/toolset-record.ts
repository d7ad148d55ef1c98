/**
 * How a registered toolset is stored: the workflow type and id of its record, and the record's
 * input. Shared by the store (which writes and reads it) and the workflow (which keeps it open).
 */
import type { JsonSchema, PinnedToolset } from "./toolset.ts";

export const TOOLSET_WORKFLOW_TYPE = "toolsetRecord";

/** Result shapes observed for tools without an output schema, by qualified tool name. */
export type ObservedResults = Record<string, { schema: JsonSchema; count: number }>;

export interface ToolsetRecordInput {
  id: string;
  namespace: string;
  document: PinnedToolset;
  registeredAt: string;
  /** Carried over by continue-as-new. */
  observed?: ObservedResults;
}

/** Toolsets are content-addressed, but each namespace registers (and later credits) its own. */
export function toolsetWorkflowId(namespace: string, id: string): string {
  return `toolset/${namespace}/${id}`;
}
