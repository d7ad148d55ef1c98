/**
 * The run workflow's queries, signals and updates, as named definitions shared by the workflow
 * and the API's client, so both sides agree on names and payloads at compile time.
 */
import { defineQuery, defineSignal, defineUpdate } from "@temporalio/workflow";
import type { CredentialsRenewed } from "../shared/credentials.ts";
import type { JournalView, RunStatus } from "../shared/run.ts";

export const getStatusQuery = defineQuery<RunStatus>("getStatus");
export const getJournalQuery = defineQuery<JournalView, [{ afterSeq?: number; limit?: number; maxBytes?: number; withBatches?: boolean }?]>("getJournal");

/** Delivers a named signal to the script's `waitForSignal(name)`; buffered until awaited. */
export const deliverSignal = defineSignal<[{ name: string; payload: unknown }]>("deliverSignal");

/** Decides a parked call. Rejected by its validator (→ HTTP 409) when the seq is not waiting. */
export const approveCallUpdate = defineUpdate<{ seq: number }, [{ seq: number }]>("approveCall");
export const rejectCallUpdate = defineUpdate<{ seq: number }, [{ seq: number; reason?: string }]>("rejectCall");

/** Sends a call parked on expired credentials again, with the same key. */
export const resumeCallUpdate = defineUpdate<{ seq: number }, [{ seq: number }]>("resumeCall");

/** The API tells parked runs that a scope's credentials were written. */
export const credentialsRenewedSignal = defineSignal<[CredentialsRenewed]>("credentialsRenewed");
