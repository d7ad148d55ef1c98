/**
 * The run workflow's queries, signals and updates, as named definitions shared by the workflow
 * and the API's client, so both sides agree on names and payloads at compile time.
 */
import { defineQuery, defineSignal, defineUpdate } from "@temporalio/workflow";
import type {
  CallInputAnswer,
  CallInputRequest,
  CallInputState,
  CallInputWithdrawal,
  CallProgressReport,
  CredentialsRenewed,
  RunCredentialsRenewed,
  Decider,
  JournalView,
  RunStatus,
  RollbackSummary,
} from "../../shared/index.ts";

export const getStatusQuery = defineQuery<RunStatus>("getStatus");
/** Which page of the journal `getJournal` answers. */
export interface JournalQueryArgs {
  afterSeq?: number;
  limit?: number;
  maxBytes?: number;
  withBatches?: boolean;
}
export const getJournalQuery = defineQuery<JournalView, [JournalQueryArgs?]>("getJournal");

/** Delivers a named signal to the script's `waitForSignal(name)`; buffered until awaited. */
export const deliverSignal = defineSignal<[{ name: string; payload: unknown }]>("deliverSignal");

/**
 * Who decides, as the API passes it: the API key's principal and, optionally, on whose behalf.
 * Absent in updates sent before it existed (and from clients that do not say).
 */
export interface DeciderArgs {
  decidedBy?: { principal: string; by?: string };
}

/** What a decision answers: the call, and who decided it as the journal records it. */
export interface CallDecided {
  seq: number;
  decidedBy?: Decider;
}

/** Decides a parked call. Rejected by its validator (→ HTTP 409) when the seq is not waiting. */
export const approveCallUpdate = defineUpdate<CallDecided, [{ seq: number } & DeciderArgs]>("approveCall");
export const rejectCallUpdate = defineUpdate<CallDecided, [{ seq: number; reason?: string } & DeciderArgs]>(
  "rejectCall",
);

/** Sends a call parked on expired credentials again, with the same key. */
export const resumeCallUpdate = defineUpdate<CallDecided, [{ seq: number } & DeciderArgs]>("resumeCall");

/**
 * Decide a call parked on an unknown outcome: resolve it with its result (checked against the
 * tool's output schema by the API before it is sent), send it again with the same key, or fail
 * it (the script gets ToolError(outcomeUnknown)). Each validator refuses (→ HTTP 409) a call not
 * parked for that.
 */
export const resolveCallUpdate = defineUpdate<CallDecided, [{ seq: number; result: unknown } & DeciderArgs]>(
  "resolveCall",
);
export const retryCallUpdate = defineUpdate<CallDecided, [{ seq: number } & DeciderArgs]>("retryCall");
export const failCallUpdate = defineUpdate<CallDecided, [{ seq: number; reason?: string } & DeciderArgs]>("failCall");

/**
 * Approve or reject the script of a run waiting, before its first step, for its approval.
 * Refused by their validator (→ HTTP 409) unless the run waits for it.
 */
export const approveScriptUpdate = defineUpdate<ScriptDecided, [DeciderArgs]>("approveScript");
export const rejectScriptUpdate = defineUpdate<ScriptDecided, [{ reason?: string } & DeciderArgs]>("rejectScript");

/** What a decision on the script answers: who decided, as the run records it. */
export interface ScriptDecided {
  decidedBy?: Decider;
}

/** The API tells parked runs that a scope's credentials were written. */
export const credentialsRenewedSignal = defineSignal<[CredentialsRenewed]>("credentialsRenewed");

/** The run's own credentials were replaced: calls parked on them are sent again with the new ones. */
export const runCredentialsRenewedSignal = defineSignal<[RunCredentialsRenewed]>("runCredentialsRenewed");

/** The run's own credentials as its calls now use them, sealed (a fork inherits them). */
export const getRunCredentialsQuery = defineQuery<{ sealed: string | null }>("getRunCredentials");

/** A call in flight reports its latest progress (coalesced by the activity to about one a second). */
export const callProgressSignal = defineSignal<[CallProgressReport]>("callProgress");

/** A call in flight waits for the harness's answer to its server's request for input. */
export const callInputRequestedSignal = defineSignal<[CallInputRequest]>("callInputRequested");

/** The attempt that requested input stopped waiting for it. */
export const callInputWithdrawnSignal = defineSignal<[CallInputWithdrawal]>("callInputWithdrawn");

/** Where an input request stands; the activity polls it for the answer. */
export const getCallInputQuery = defineQuery<CallInputState, [{ seq: number; requestId: string }]>("getCallInput");

/** The harness's answer to an input request. Rejected by its validator (→ HTTP 409) unless that request waits. */
export const answerCallInputUpdate = defineUpdate<{ seq: number }, [CallInputAnswer]>("answerCallInput");

/**
 * Rolls the run back: the script takes no further step, and completed calls are reverted in
 * reverse seq order. Refused by its validator (→ HTTP 409) once the run is ending or already
 * rolling back. Answers the rollback as it begins.
 */
export const rollbackRunUpdate = defineUpdate<RollbackSummary, [{ reason?: string } & DeciderArgs]>("rollbackRun");
