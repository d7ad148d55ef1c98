/**
 * What starts a run and what the workflow reports about itself. Shared by the API (which starts
 * runs and reads them back) and the workflow (which keeps them).
 */
import type { SearchAttributeType } from "@temporalio/common";
import type { Decider, JournalEntry } from "./journal.ts";
import type { OnFailure, RollbackSummary, RollbackTrigger } from "./rollback.ts";
import type { ToolErrorData } from "./tool-error.ts";
import type { RunTrace } from "./trace-context.ts";
import type { PinnedToolset } from "./toolset.ts";
import type { AdvanceResult } from "./step.ts";

export const RUN_WORKFLOW_TYPE = "runScript";
export const RUN_ID_PREFIX = "run_";

export interface RunInput {
  runId: string;
  /** The script as JavaScript (types stripped, positions kept). */
  script: string;
  /** SHA-256 of the script as written, for cassettes and listing. */
  scriptHash: string;
  /**
   * The script's declared input type as TypeScript text, which stripping the types lost; kept so
   * that saving the run's script can store it. The run workflow never reads it: a new field here
   * changes no command, so it needs no patch.
   */
  inputType?: string;
  toolsetId: string;
  toolset: PinnedToolset;
  input: unknown;
  namespace: string;
  endUser?: string;
  /** Set when another run started this one (`workflows.<name>.start`): it is told the result. */
  parentRunId?: string;
  /** The run's own credentials, sealed before they reached Temporal. */
  credentials?: string;
  /** Set on a fork: the parent's finished calls, reused while the new script issues the same calls. */
  fork?: ForkSeed;
  /** The run's trace: one trace per run, a span per call. */
  trace?: RunTrace;
  /** Continue as new once history has this many events (default: when Temporal suggests it). */
  continueAsNewAfterEvents?: number;
  /** Carried over by continue-as-new: the journal so far. */
  carried?: CarriedJournal;
  /** The sandbox runtime the run started on (`SANDBOX_RUNTIME_VERSION`); absent: version 1. */
  runtimeVersion?: number;
  /** The run waits before its first step until the harness approves its script (the run option `approveScript`). */
  approveScript?: boolean;
  /** `rollback`: a script that fails rolls the run back instead (absent: it fails). */
  onFailure?: OnFailure;
  /**
   * The run's first step, taken before the run started by the worker in the API's process (the
   * embedded stack), which keeps the run's isolate warm: the run adopts it instead of taking it
   * in a local activity (`PATCHES.firstStepCarried`). Never on a run that waits for its script's
   * approval.
   */
  firstStep?: FirstStep;
}

/** Whether a run waits for the harness to approve its script before its first step. */
export function requiresScriptApproval(run: Pick<RunInput, "approveScript" | "toolset">): boolean {
  return run.approveScript === true || run.toolset.scriptApproval === "required";
}

/** A first step as the worker's `advanceScript` answered it (a cold start never needs another). */
export type FirstStep = Exclude<AdvanceResult, { kind: "needsColdStart" }>;

export interface ForkSeed {
  parentRunId: string;
  /** The parent's calls by seq, with how each ended; calls that never ended are absent. */
  calls: {
    seq: number;
    tool: string;
    args: unknown;
    outcome: { ok: true; value: unknown } | { ok: false; error: ToolErrorData };
  }[];
  /** Set once the new script issued a call that differs: from that seq on, calls are sent for real. */
  divergedAt?: number;
}

export interface CarriedJournal {
  startedAt: number;
  entries: JournalEntry[];
  completionOrder: number[];
  batches: { at: number; seqs: number[] }[];
  signals: Record<string, unknown[]>;
  /** Calls completed but not yet fed to the script, in completion order. */
  unfed: number[];
  /** A rollback asked for while the run drained to continue as new: the next execution makes it. */
  rollback?: RollbackTrigger;
}

export type RunState = "running" | "parked" | "completed" | "failed" | "cancelled" | "rolledBack";

/** A run, self-contained, for replaying its script offline: never credentials. */
export interface Cassette {
  format: "rewind.cassette/1";
  runId: string;
  toolsetId: string;
  toolset: PinnedToolset;
  scriptHash: string;
  /** The recorded script as it ran (JavaScript, types stripped). */
  script: string;
  input: unknown;
  startedAt: number;
  entries: JournalEntry[];
  batches: { at: number; seqs: number[] }[];
  /** The sandbox runtime the run started on; absent in cassettes of runs that recorded none (1). */
  runtimeVersion?: number;
}

/**
 * Where a run stands on its script's approval, when it asked for one (`approveScript`, or the
 * toolset's `scriptApproval: "required"`): waiting before its first step, approved, or rejected.
 */
export interface ScriptApprovalView {
  state: "waiting" | "approved" | "rejected";
  /** Who decided (`decision` is `approved` or `rejected`). */
  decidedBy?: Decider;
  /** Why it was rejected. */
  reason?: string;
}

export interface RunStatus {
  state: RunState;
  /** Set when the run asked for its script's approval. */
  scriptApproval?: ScriptApprovalView;
  calls: { total: number; inFlight: number };
  parked: { seq: number; tool: string; args: unknown; reason: string; details?: Record<string, unknown> }[];
  /** Set once a rollback began. */
  rollback?: RollbackSummary;
}

export interface JournalView {
  /** Set when the run asked for its script's approval: who approved or rejected it. */
  scriptApproval?: ScriptApprovalView;
  entries: JournalEntry[];
  completionOrder: number[];
  /** For a fork: its parent, and the first seq that was sent for real. */
  fork?: { parentRunId: string; divergedAt: number | null };
  /** Workflow time of the run's first step, and how completions were grouped: for cassettes. */
  startedAt?: number;
  batches?: { at: number; seqs: number[] }[];
  /** Set when the page stopped at its byte budget before its entry limit: more entries follow. */
  truncated?: boolean;
}

const keyword = (name: string): { name: string; type: typeof SearchAttributeType.KEYWORD } => ({
  name,
  type: "KEYWORD",
});
const datetime = (name: string): { name: string; type: typeof SearchAttributeType.DATETIME } => ({
  name,
  type: "DATETIME",
});

/** Search attributes every run carries, registered by the dev server's config (temporal-dev.yml). */
export const SEARCH_ATTRIBUTES = {
  toolset: keyword("RewindToolset"),
  endUser: keyword("RewindEndUser"),
  namespace: keyword("RewindNamespace"),
  status: keyword("RewindStatus"),
  /**
   * When the run started, set at start and kept by continue-as-new (Temporal's StartTime is the
   * current execution's). Absent on runs started before it existed.
   */
  startedAt: datetime("RewindStartedAt"),
} as const;

/** What a run's memo holds (set at start, kept by continue-as-new): for the Temporal UI and lists. */
export interface RunMemo {
  toolset: string;
  endUser?: string;
}

/**
 * Failure types a run can end with (ApplicationFailure.type), as the API and `run.failed` give
 * them; docs/errors.md says what a caller does about each.
 */
export const RUN_FAILURE_TYPES = {
  /** The script threw (a ToolError it did not catch included): details hold the error. */
  scriptFailed: "ScriptFailed",
  /** A sandbox limit (CPU, memory, calls) ended a step: details.limit names it. */
  limitExceeded: "LimitExceeded",
  /** The script waits for a promise nothing will settle. */
  stuck: "ScriptStuck",
  /**
   * Rewind could not go on with the run: the sandbox refused a cold start, or a step's activity
   * failed past its retries. Runs that ended so before it was named read as this type too.
   */
  broken: "RunBroken",
  /** The harness rejected the script before its first step (`POST /v1/runs/{id}/reject`): it never ran. */
  scriptRejected: "ScriptRejected",
} as const;

export type RunFailureType = (typeof RUN_FAILURE_TYPES)[keyof typeof RUN_FAILURE_TYPES];

export function isRunFailureType(value: unknown): value is RunFailureType {
  return typeof value === "string" && (Object.values(RUN_FAILURE_TYPES) as string[]).includes(value);
}

/** What a failed run's failure is, for the API and `run.failed`. */
export interface RunFailure {
  type: RunFailureType;
  message: string;
  details?: unknown;
}
