/**
 * What clients may send to a toolset's credentials (toolset-credentials.ts): the API writes a
 * scope with an update, the dispatching activity reads the sealed values with a query, and a run
 * parked on them asks to be woken by the next write with a signal. Its own file so they import
 * the definitions, not the workflow.
 */
import { defineQuery, defineSignal, defineUpdate } from "@temporalio/workflow";
import type { CredentialsWait, StoredCredentials } from "../../shared/index.ts";

export const getCredentialsQuery = defineQuery<StoredCredentials>("getCredentials");
/** `woken`: the runs waiting on the written scope that were signalled (absent from older workers). */
export const setCredentialsUpdate = defineUpdate<
  { revision: number; woken?: string[] },
  [{ endUser?: string; sealed: string }]
>("setCredentials");
export const awaitCredentialsSignal = defineSignal<[CredentialsWait]>("awaitCredentials");
