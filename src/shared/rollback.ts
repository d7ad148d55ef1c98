/**
 * A rollback, as the workflow keeps it and the API, the events and the SDK show it: what set it
 * off (the harness asked, or the script failed under `onFailure: "rollback"`), which completed
 * calls were reverted by which revert call, which could not be and why, and which calls had not
 * finished when the script was stopped. Shared because the workflow builds it and every reader
 * of a run shows it.
 */

/** What a run does when its script fails: fail (the default), or roll back. */
export type OnFailure = "fail" | "rollback";

/** The harness's request, as the API passes it to the run (`rollbackRun` update). */
export interface RollbackRequest {
  /** The API key's principal, as for decisions on calls. */
  principal?: string;
  /** On whose behalf, as the caller said. */
  by?: string;
  reason?: string;
}

export type RollbackTrigger =
  | ({ kind: "requested"; at: number } & RollbackRequest)
  | { kind: "scriptFailed"; at: number; error: { type: string; message: string } };

/** A completed call its revert undid. */
export interface RevertedCall {
  seq: number;
  tool: string;
  /** The revert call: its own journal entry and idempotency key `<run_id>/<revertSeq>`. */
  revertSeq: number;
  revertTool: string;
}

/** A completed call whose revert could not be built or did not succeed. */
export interface NotRevertedCall {
  seq: number;
  tool: string;
  revertTool: string;
  /** Set when the revert was sent (and failed, was rejected, or its outcome is unknown). */
  revertSeq?: number;
  reason: string;
}

export interface RollbackSummary {
  /** `rollingBack` while reverts are being made; `rolledBack` once the run ended so. */
  state: "rollingBack" | "rolledBack";
  trigger: RollbackTrigger;
  /** Newest first: reverts are made in reverse seq order, one at a time. */
  reverted: RevertedCall[];
  notReverted: NotRevertedCall[];
  /** Calls issued and not finished when the script was stopped (never sent, or abandoned waits). */
  unfinished: { seq: number; tool: string; status: "pending" | "running" | "parked" }[];
}

/** What an original call's journal entry says of its revert once the rollback reached it. */
export interface CallRollback {
  outcome: "reverted" | "notReverted";
  revertSeq?: number;
  reason?: string;
}

/** Why parked calls that were never sent are withdrawn when a rollback begins. */
export const ROLLBACK_WITHDRAWN = "the run is rolling back";
