/**
 * What a call in flight tells its run besides its outcome: how far it got (an MCP server's
 * progress notifications) and that its server asks the harness for input (an MCP elicitation),
 * which the harness answers through the API. Shared by the activity that reports, the workflow
 * that keeps the reports in the journal, and the API that answers.
 */

export interface ElicitationRequest {
  /** What the server asks, for a human to read. */
  message: string;
  /** The JSON Schema an accepted answer's content must fit (flat, primitive properties in MCP). */
  requestedSchema: Record<string, unknown>;
}

export type ElicitationAnswer =
  { action: "accept"; content: Record<string, unknown> } | { action: "decline" } | { action: "cancel" };

/** Which call a report is about: the run, the call's seq and the activity attempt reporting. */
interface CallReportHeader {
  /** The run's Rewind namespace; a report naming another namespace is ignored. */
  namespace: string;
  seq: number;
  attempt: number;
}

/** Signal `callProgress`: the latest progress of a call in flight. */
export interface CallProgressReport extends CallReportHeader {
  progress: number;
  total?: number;
  message?: string;
}

/** Signal `callInputRequested`: the call waits for the harness's answer to this request. */
export interface CallInputRequest extends CallReportHeader, ElicitationRequest {
  /** Chosen by the activity, unique per request; the answer is fetched by it. */
  requestId: string;
}

/** Signal `callInputWithdrawn`: the attempt stopped waiting (it ended, was cancelled or timed out). */
export interface CallInputWithdrawal extends CallReportHeader {
  requestId: string;
}

/** Update `answerCallInput`: the harness's answer to the request a call waits on. */
export interface CallInputAnswer {
  seq: number;
  requestId: string;
  answer: ElicitationAnswer;
}

/**
 * Query `getCallInput`: where a request stands. `unknown` until the run has handled the request's
 * signal; `closed` once it can no longer be answered (withdrawn, superseded, the call or run ended).
 */
export type CallInputState =
  | { state: "unknown" }
  | { state: "waiting" }
  | { state: "answered"; answer: ElicitationAnswer }
  | { state: "closed"; reason: string };

/** The latest progress a call reported, as the journal keeps it. */
export interface CallProgress {
  progress: number;
  total?: number;
  message?: string;
  /** The activity attempt that reported it. */
  attempt: number;
  /** Workflow time (ms since epoch) the run received it. */
  at: number;
}

/** An input request a call made, as the journal keeps it, with how it ended. */
export interface CallInputRecord extends ElicitationRequest {
  requestId: string;
  attempt: number;
  requestedAt: number;
  /** The harness's answer, or `withdrawn` when it could no longer be answered; absent while it waits. */
  outcome?: ElicitationAnswer["action"] | "withdrawn";
  /** The content of an accepted answer. */
  content?: Record<string, unknown>;
  endedAt?: number;
}

/** Input requests a journal entry keeps (the latest ones). */
export const MAX_INPUT_RECORDS = 20;
