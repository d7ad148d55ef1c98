/**
 * Registered toolsets, kept in Temporal as record workflows (see record-store.ts).
 */
import type { Client } from "@temporalio/client";
import type { PinnedToolset } from "../shared/index.ts";
import { TOOLSET_WORKFLOW_TYPE, toolsetWorkflowId, type ToolsetRecordInput } from "../shared/index.ts";
import { createRecordStore, type RecordStore } from "./record-store.ts";

export type ToolsetStore = RecordStore<PinnedToolset>;

export function createTemporalToolsetStore(client: Client, taskQueue: string): ToolsetStore {
  return createRecordStore<PinnedToolset, ToolsetRecordInput>({
    client,
    taskQueue,
    workflowType: TOOLSET_WORKFLOW_TYPE,
    workflowId: toolsetWorkflowId,
    toInput: (namespace, id, document) => ({ id, namespace, document, registeredAt: new Date().toISOString() }),
    fromInput: (input) => input.document,
  });
}
