/**
 * The journal: one entry per call a script made, and the order in which calls completed.
 * It is the script's only input besides the run input, so replaying a script against it must
 * issue the same calls with the same seqs. Shared by the workflow (which keeps it), the sandbox
 * (which is fed from it) and the API (which shows it).
 */
import type { CallInputRecord, CallProgress } from "./call-input.ts";
import type { CredentialScope } from "./credentials.ts";
import type { CallRollback } from "./rollback.ts";
import type { ToolErrorData } from "./tool-error.ts";

/** Built-in tools the workflow serves itself. */
export const BUILTIN_TOOLS = {
  sleep: "rewind.sleep",
  waitForSignal: "rewind.waitForSignal",
  webhook: "rewind.webhook",
} as const;

/** The http tool: a script's `fetch`, sent by the dispatcher. */
export const HTTP_TOOL = "http.fetch";

export type CallStatus = "pending" | "running" | "parked" | "completed" | "failed";

export interface JournalEntry {
  seq: number;
  /** Qualified name: `group.tool`, or a built-in such as `rewind.sleep`. */
  tool: string;
  args: unknown;
  status: CallStatus;
  result?: unknown;
  error?: ToolErrorData;
  attempts: number;
  /** Set once the harness approved the call (tools with `approval: true`). */
  approved?: boolean;
  /** Who last decided the call while it was parked (approved, rejected, resumed, resolved, retried or failed it), as the API saw them. */
  decidedBy?: Decider;
  /** Set when a fork reused its parent's outcome for this call instead of sending it. */
  fromParent?: string;
  /** Set on a revert call: the seq of the completed call it undoes (a rollback made it, not the script). */
  revertOf?: number;
  /** Set on a completed call once a rollback reverted it, or could not (with the reason). */
  rollback?: CallRollback;
  /** Workflow time (ms since epoch) the call was issued, started and completed. */
  issuedAt: number;
  startedAt?: number;
  completedAt?: number;
  /** Whose credentials an MCP call was last sent with (run, end user or toolset); absent when none. */
  credentials?: CredentialScope;
  /** The latest progress the call reported while in flight (kept once it ended). */
  progress?: CallProgress;
  /** Input its server asked the harness for while in flight (elicitations), latest last. */
  inputs?: CallInputRecord[];
}

/**
 * Who decided a parked call: the API key's principal (its namespace and a short fingerprint of
 * the key, never the key) and, when the caller said, on whose behalf (`by`).
 */
export interface Decider {
  principal: string;
  by?: string;
  /** Workflow time (ms since epoch) of the decision. */
  at: number;
  /** `resolved`, `retried` and `failed` decide a call parked on an unknown outcome. */
  decision: "approved" | "rejected" | "resumed" | "resolved" | "retried" | "failed";
}

/** A completion fed into the script, in completion order. */
export type CallEvent = { seq: number; ok: true; value: unknown } | { seq: number; ok: false; error: ToolErrorData };

/**
 * `JSON.stringify` of a successful call's event, from the JSON of its value (`valueJson`, what
 * `JSON.stringify(value)` gave): the same text, without serializing a large value again. A value
 * JSON leaves out (undefined) leaves out the key too, so it is encoded whole.
 */
export function encodeCallEvent(seq: number, value: unknown, valueJson: string | undefined): string {
  if (value === undefined || valueJson === undefined) return JSON.stringify({ seq, ok: true, value });
  return `{"seq":${JSON.stringify(seq)},"ok":true,"value":${valueJson}}`;
}

/**
 * A batch of completions fed in one step, with the workflow time of that step, which is what
 * `Date.now()` returns inside the script while it handles them.
 */
export interface EventBatch {
  at: number;
  events: CallEvent[];
}

/** A call the script issued in the last step. */
export interface IssuedCall {
  seq: number;
  tool: string;
  args: unknown;
  /** Set when the call was refused before dispatch (e.g. invalid arguments); already settled in the script. */
  refused?: ToolErrorData;
}
