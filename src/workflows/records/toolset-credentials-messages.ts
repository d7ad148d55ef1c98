/**
 * What clients may send to a toolset's credentials (toolset-credentials.ts): the API writes a
 * scope with an update, the dispatching activity reads the sealed values with a query. Its own
 * file so they import the definitions, not the workflow.
 */
import { defineQuery, defineUpdate } from "@temporalio/workflow";
import type { StoredCredentials } from "../../shared/index.ts";

export const getCredentialsQuery = defineQuery<StoredCredentials>("getCredentials");
export const setCredentialsUpdate = defineUpdate<{ revision: number }, [{ endUser?: string; sealed: string }]>(
  "setCredentials",
);
