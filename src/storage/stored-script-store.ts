/**
 * Stored scripts (the `workflows` a toolset pins and `/v1/workflows` stores), kept in Temporal as
 * record workflows (see record-store.ts). Their id is the digest of name, script and toolset (and
 * description, when there is one), so storing the same script twice gives one id.
 */
import { createHash } from "node:crypto";
import type { Client } from "@temporalio/client";
import { STORED_SCRIPT_RECORD_TYPE, storedScriptWorkflowId, type StoredScript } from "../shared/index.ts";
import { createRecordStore, type RecordStore } from "./record-store.ts";
import { canonicalJson } from "./toolset-id.ts";

export type StoredScriptStore = RecordStore<StoredScript>;

export const STORED_SCRIPT_ID_PATTERN = /^wf_[0-9a-f]{64}$/;

export function storedScriptId(name: string, scriptHash: string, toolsetId: string, description?: string): string {
  // Without a description the digest is the one scripts stored before descriptions existed got.
  const addressed =
    description === undefined ? { name, scriptHash, toolsetId } : { name, scriptHash, toolsetId, description };
  return `wf_${createHash("sha256").update(canonicalJson(addressed)).digest("hex")}`;
}

export function createStoredScriptStore(client: Client, taskQueue: string): StoredScriptStore {
  return createRecordStore<StoredScript, { namespace: string; record: StoredScript }>({
    client,
    taskQueue,
    workflowType: STORED_SCRIPT_RECORD_TYPE,
    workflowId: storedScriptWorkflowId,
    toInput: (namespace, _id, record) => ({ namespace, record }),
    fromInput: (input) => input.record,
  });
}
