/**
 * Stored scripts (the `workflows` a toolset pins and `/v1/workflows` stores), kept in Temporal as
 * record workflows (see record-store.ts). Their id is the digest of name, script and toolset (and
 * description and declared input type, when there are), so storing the same script twice gives
 * one id.
 */
import { createHash } from "node:crypto";
import type { Client } from "@temporalio/client";
import { STORED_SCRIPT_RECORD_TYPE, storedScriptWorkflowId, type StoredScript } from "../shared/index.ts";
import { createRecordStore, type RecordStore } from "./record-store.ts";
import { canonicalJson } from "./toolset-id.ts";

export type StoredScriptStore = RecordStore<StoredScript>;

export const STORED_SCRIPT_ID_PATTERN = /^wf_[0-9a-f]{64}$/;

/** What a stored script's id covers besides name, script and toolset, each only when present. */
export interface StoredScriptIdExtras {
  description?: string | undefined;
  inputType?: string | undefined;
}

export function storedScriptId(
  name: string,
  scriptHash: string,
  toolsetId: string,
  extras: StoredScriptIdExtras = {},
): string {
  // A field left out when absent keeps the digest scripts stored before that field existed got.
  const addressed = {
    name,
    scriptHash,
    toolsetId,
    ...(extras.description === undefined ? {} : { description: extras.description }),
    ...(extras.inputType === undefined ? {} : { inputType: extras.inputType }),
  };
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
