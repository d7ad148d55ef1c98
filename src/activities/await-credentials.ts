/**
 * The `awaitCredentials` local activity: a run whose call was refused with stored credentials
 * tells its toolset's credentials workflow, and its base toolset's, which revision the call was
 * refused with. The signal starts that workflow if nothing was ever written, so the first write
 * finds the run waiting; the workflow wakes the run at once if a newer write was made since.
 */
import type { Client } from "@temporalio/client";
import {
  CREDENTIALS_WORKFLOW_TYPE,
  credentialsWorkflowId,
  type CredentialRevisions,
  type CredentialsWait,
  type StoredCredentials,
} from "../shared/index.ts";
import { awaitCredentialsSignal } from "../workflows/messages.ts";

export interface AwaitCredentialsDeps {
  client: Client;
  /** The queue the record workflows run on (credentials among them). */
  taskQueue: string;
}

export interface AwaitCredentialsInput {
  namespace: string;
  toolsetId: string;
  baseToolsetId?: string;
  wait: Pick<CredentialsWait, "runId" | "scope" | "endUser">;
  seen: CredentialRevisions;
}

const EMPTY: StoredCredentials = { endUsers: {}, revision: 0 };

export function createAwaitCredentials(deps: AwaitCredentialsDeps) {
  return async function awaitCredentials(input: AwaitCredentialsInput): Promise<void> {
    const tell = (toolsetId: string, wait: CredentialsWait) =>
      deps.client.workflow.signalWithStart(CREDENTIALS_WORKFLOW_TYPE, {
        workflowId: credentialsWorkflowId(input.namespace, toolsetId),
        taskQueue: deps.taskQueue,
        args: [EMPTY],
        signal: awaitCredentialsSignal,
        signalArgs: [wait],
      });
    const { baseToolsetId, seen } = input;
    await Promise.all([
      tell(input.toolsetId, { ...input.wait, seen: seen.own }),
      ...(baseToolsetId === undefined || seen.base === undefined
        ? []
        : [tell(baseToolsetId, { ...input.wait, seen: seen.base, toolsetId: baseToolsetId })]),
    ]);
  };
}
