/**
 * What the harness tells a running run as a whole: the decision on its script (before its first
 * step), renewed credentials, a signal, a rollback. Each first checks that the run is the
 * caller's and still running (409 naming what it can no longer do otherwise), then sends the run
 * one update or signal; the decisions on its calls are in call-decisions.ts.
 */
import { WorkflowNotFoundError } from "@temporalio/client";
import { SEARCH_ATTRIBUTES } from "../shared/index.ts";
import {
  approveScriptUpdate,
  rejectScriptUpdate,
  runCredentialsRenewedSignal,
  deliverSignal,
  type ScriptDecided,
} from "../workflows/messages.ts";
import { sendCallUpdate } from "./call-updates.ts";
import { HttpError } from "./http-error.ts";
import { decidedByOf, describeRunning, type RunContext } from "./run-lookup.ts";
import { getRun, type RunView } from "./run-reads.ts";
import { askRollback, type RollbackAsked } from "./run-rollback.ts";

/** A decision on a run's script, with who decided, as a decision on a call has it. */
export interface ScriptDecisionInput {
  approve: boolean;
  reason?: string | undefined;
  principal: string;
  by?: string | undefined;
}

/**
 * Approves or rejects the script of a run waiting for that before its first step; 409 when
 * it does not wait for it (it never asked, was decided, or ended).
 */
export async function sendScriptDecision(
  context: RunContext,
  runId: string,
  namespace: string,
  decision: ScriptDecisionInput,
): Promise<ScriptDecided> {
  const { client } = context;
  await describeRunning(context, runId, namespace, "its script can no longer be approved or rejected");
  const handle = client.workflow.getHandle(runId);
  const decidedBy = decidedByOf(decision);
  const send = () =>
    decision.approve
      ? handle.executeUpdate(approveScriptUpdate, { args: [{ decidedBy }] })
      : handle.executeUpdate(rejectScriptUpdate, {
          args: [{ decidedBy, ...(decision.reason ? { reason: decision.reason } : {}) }],
        });
  return sendCallUpdate(client, runId, send, `run ${runId} is not waiting for its script's approval`);
}

/**
 * Replaces a running run's own credentials: `seal` checks them against the run's toolset and
 * seals them; its calls parked on them are sent again with the same key, and every later call
 * uses them. 409 once the run ended. One describe answers ownership, state and toolset.
 */
export async function sendRenewedCredentials(
  context: RunContext,
  runId: string,
  namespace: string,
  seal: (toolsetId: string) => Promise<string>,
): Promise<void> {
  const d = await describeRunning(context, runId, namespace, "its credentials can no longer be renewed");
  const sealed = await seal(String(d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.toolset) ?? ""));
  await context.client.workflow.getHandle(runId).signal(runCredentialsRenewedSignal, { sealed });
}

/**
 * Sends the run the signal `name` with `payload`, as its webhook would: what the script's
 * `waitForSignal(name)` answers (or will, if it waits later; signals wait in the run's inbox).
 * 404 for another namespace's run, 409 once the run ended.
 */
export async function sendSignal(
  context: RunContext,
  runId: string,
  namespace: string,
  name: string,
  payload: unknown,
): Promise<void> {
  await describeRunning(context, runId, namespace, "it can no longer receive signals");
  try {
    await context.client.workflow.getHandle(runId).signal(deliverSignal, { name, payload });
  } catch (error) {
    if (error instanceof WorkflowNotFoundError)
      throw new HttpError(409, "conflict", `run ${runId} is no longer running; it can no longer receive signals`);
    throw error;
  }
}

/**
 * Rolls an open run back (running or parked): it stops its script and reverts its completed
 * calls; 409 once it ended, is ending or rolls back already. Answers the run's view after.
 */
export async function rollbackRun(
  context: RunContext,
  runId: string,
  namespace: string,
  asked: RollbackAsked,
): Promise<RunView> {
  await describeRunning(context, runId, namespace, "only an open run can be rolled back");
  await askRollback(context.client, runId, asked);
  return getRun(context, runId, namespace);
}
