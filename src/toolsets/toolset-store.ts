/**
 * Toolsets stored in Temporal: `save` starts the toolset's record workflow (a second save of the
 * same id finds it and changes nothing), `load` reads the document back from the record's first
 * history event, so it needs no worker. Documents never change, so loads are cached.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from "@temporalio/client";
import type { PinnedToolset } from "../shared/toolset.ts";
import { TOOLSET_WORKFLOW_TYPE, toolsetWorkflowId, type ToolsetRecordInput } from "../shared/toolset-record.ts";

export interface ToolsetStore {
  /** Returns true when this call stored it, false when it was already there. */
  save(namespace: string, id: string, document: PinnedToolset): Promise<boolean>;
  load(namespace: string, id: string): Promise<PinnedToolset | undefined>;
}

const MAX_CACHED = 1000;

export function createTemporalToolsetStore(client: Client, taskQueue: string): ToolsetStore {
  const cache = new Map<string, PinnedToolset>();
  const remember = (key: string, document: PinnedToolset) => {
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value ?? "");
    cache.set(key, document);
  };

  return {
    async save(namespace, id, document) {
      const workflowId = toolsetWorkflowId(namespace, id);
      const input: ToolsetRecordInput = { id, namespace, document, registeredAt: new Date().toISOString() };
      try {
        await client.workflow.start(TOOLSET_WORKFLOW_TYPE, { taskQueue, workflowId, args: [input], workflowIdReusePolicy: "REJECT_DUPLICATE" });
        remember(workflowId, document);
        return true;
      } catch (error) {
        if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
        throw error;
      }
    },

    async load(namespace, id) {
      const workflowId = toolsetWorkflowId(namespace, id);
      const cached = cache.get(workflowId);
      if (cached) return cached;
      let response;
      try {
        response = await client.workflowService.getWorkflowExecutionHistory({
          namespace: client.options.namespace,
          execution: { workflowId },
          maximumPageSize: 1,
        });
      } catch (error) {
        if ((error as { code?: number }).code === 5 /* gRPC NOT_FOUND */) return undefined;
        throw error;
      }
      const payload = response.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
      if (!payload) return undefined;
      const input = client.options.loadedDataConverter.payloadConverter.fromPayload<ToolsetRecordInput>(payload);
      remember(workflowId, input.document);
      return input.document;
    },
  };
}
