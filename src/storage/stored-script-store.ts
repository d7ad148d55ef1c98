/**
 * Stored workflow scripts, kept in Temporal as record workflows (see record-store.ts). Their id
 * is the digest of name, script and toolset, so storing the same workflow twice gives one id.
 */
import { createHash } from "node:crypto";
import type { Client } from "@temporalio/client";
import {
  WORKFLOW_SCRIPT_RECORD_TYPE,
  workflowScriptWorkflowId,
  type StoredWorkflow,
} from "../shared/stored-script.ts";
import { createRecordStore, type RecordStore } from "./record-store.ts";
import { canonicalJson } from "../toolsets/toolset-id.ts";

export type WorkflowStore = RecordStore<StoredWorkflow>;

export const WORKFLOW_ID_PATTERN = /^wf_[0-9a-f]{64}$/;

export function workflowScriptId(name: string, scriptHash: string, toolsetId: string): string {
  return `wf_${createHash("sha256").update(canonicalJson({ name, scriptHash, toolsetId })).digest("hex")}`;
}

export function createTemporalWorkflowStore(client: Client, taskQueue: string): WorkflowStore {
  return createRecordStore<StoredWorkflow, { namespace: string; record: StoredWorkflow }>({
    client,
    taskQueue,
    workflowType: WORKFLOW_SCRIPT_RECORD_TYPE,
    workflowId: workflowScriptWorkflowId,
    toInput: (namespace, _id, record) => ({ namespace, record }),
    fromInput: (input) => input.record,
  });
}
