/**
 * Decisions on what a running run waits for, and the status reads they start from: approving or
 * rejecting its script, deciding a parked call, answering the input a call's server asked for,
 * and telling why a call is parked. Apart from run-service.ts because each is one update (or
 * query) to the run's workflow and nothing else: the service checks first that the run is the
 * caller's and still running (409 otherwise), then hands it here.
 */
import type { Client, WorkflowExecutionDescription } from "@temporalio/client";
import { SEARCH_ATTRIBUTES, type ElicitationAnswer, type JsonSchema, type RunStatus } from "../shared/index.ts";
import { validateAgainstSchema } from "../schemas/index.ts";
import {
  answerCallInputUpdate,
  approveCallUpdate,
  approveScriptUpdate,
  failCallUpdate,
  getStatusQuery,
  rejectCallUpdate,
  rejectScriptUpdate,
  resolveCallUpdate,
  resumeCallUpdate,
  retryCallUpdate,
  type CallDecided,
  type ScriptDecided,
} from "../workflows/messages.ts";
import { sendCallUpdate } from "./call-updates.ts";
import { HttpError, notFound } from "./http-error.ts";
import { noWorkerAnswered, withinQueryTimeout } from "./worker-query.ts";

/** What a decision on a parked call decides; the last three decide a call parked on an unknown outcome. */
export type CallDecision =
  | { approve: true }
  | { approve: false; reason?: string }
  | { resume: true }
  | { resolve: { result: unknown } }
  | { retry: true }
  | { fail: true; reason?: string };

/** A call of a running run as its status shows it: why it is parked, if it is. */
export interface CallWaiting {
  /** The toolset the run pinned. */
  toolsetId: string;
  parked?: { seq: number; tool: string; reason: string };
}

/** A decision on a parked call, with who decided: the API key's principal and, if given, on whose behalf. */
export type CallDecisionInput = CallDecision & {
  principal: string;
  by?: string | undefined;
};

/** A decision on a run's script, with who decided, as a decision on a call has it. */
export interface ScriptDecisionInput {
  approve: boolean;
  reason?: string | undefined;
  principal: string;
  by?: string | undefined;
}

/** Sends the decision on the script of a run waiting for its approval; 409 when it does not wait for it. */
export function sendScriptDecision(
  client: Client,
  runId: string,
  decision: ScriptDecisionInput,
): Promise<ScriptDecided> {
  const handle = client.workflow.getHandle(runId);
  const decidedBy = { principal: decision.principal, ...(decision.by ? { by: decision.by } : {}) };
  const send = () =>
    decision.approve
      ? handle.executeUpdate(approveScriptUpdate, { args: [{ decidedBy }] })
      : handle.executeUpdate(rejectScriptUpdate, {
          args: [{ decidedBy, ...(decision.reason ? { reason: decision.reason } : {}) }],
        });
  return sendCallUpdate(client, runId, send, `run ${runId} is not waiting for its script's approval`);
}

/** Sends the decision on call `seq`, recording who decided; 409 when the call is not waiting for one. */
export function sendCallDecision(
  client: Client,
  runId: string,
  seq: number,
  decision: CallDecisionInput,
): Promise<CallDecided> {
  const handle = client.workflow.getHandle(runId);
  const decidedBy = { principal: decision.principal, ...(decision.by ? { by: decision.by } : {}) };
  const send = () => {
    if ("resume" in decision) return handle.executeUpdate(resumeCallUpdate, { args: [{ seq, decidedBy }] });
    if ("resolve" in decision)
      return handle.executeUpdate(resolveCallUpdate, {
        args: [{ seq, decidedBy, result: decision.resolve.result }],
      });
    if ("retry" in decision) return handle.executeUpdate(retryCallUpdate, { args: [{ seq, decidedBy }] });
    if ("fail" in decision)
      return handle.executeUpdate(failCallUpdate, {
        args: [{ seq, decidedBy, ...(decision.reason ? { reason: decision.reason } : {}) }],
      });
    return decision.approve
      ? handle.executeUpdate(approveCallUpdate, { args: [{ seq, decidedBy }] })
      : handle.executeUpdate(rejectCallUpdate, {
          args: [{ seq, decidedBy, ...(decision.reason ? { reason: decision.reason } : {}) }],
        });
  };
  return sendCallUpdate(client, runId, send, `call ${seq} of run ${runId} is not waiting for a decision`);
}

/** The run's status, which shows call `seq`: 503 when no worker answers, 404 for a call the run never made. */
async function statusWithCall(client: Client, runId: string, seq: number): Promise<RunStatus> {
  const status = await withinQueryTimeout(client.workflow.getHandle(runId).query(getStatusQuery));
  if (!status) throw noWorkerAnswered(runId);
  if (seq > status.calls.total) throw notFound(`call ${seq} of run ${runId}`);
  return status;
}

/** Call `seq` of the running run `runId`, which `d` describes, and why it is parked, if it is, with the run's toolset. */
export async function readCallWaiting(
  client: Client,
  runId: string,
  d: WorkflowExecutionDescription,
  seq: number,
): Promise<CallWaiting> {
  const status = await statusWithCall(client, runId, seq);
  const parked = status.parked.find((p) => p.seq === seq);
  return {
    toolsetId: String(d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.toolset) ?? ""),
    ...(parked ? { parked: { seq, tool: parked.tool, reason: parked.reason } } : {}),
  };
}

/**
 * Sends the answer to the input call `seq`'s server asked for: 409 when the call waits for no
 * input, 422 when accepted content does not fit the schema the server asked for.
 */
export async function sendInputAnswer(
  client: Client,
  runId: string,
  seq: number,
  answer: ElicitationAnswer,
): Promise<{ seq: number }> {
  const status = await statusWithCall(client, runId, seq);
  const waiting = status.parked.find((p) => p.seq === seq && p.reason === "elicitationRequested");
  const requestId = waiting?.details?.["requestId"];
  const refused = `call ${seq} of run ${runId} is not waiting for input`;
  if (typeof requestId !== "string") throw new HttpError(409, "conflict", refused);
  if (answer.action === "accept") {
    const schema = waiting?.details?.["requestedSchema"];
    const problem = validateAgainstSchema(
      typeof schema === "object" && schema !== null ? (schema as JsonSchema) : {},
      answer.content,
      "content",
    );
    if (problem)
      throw new HttpError(
        422,
        "invalidAnswer",
        `the content does not fit the schema call ${seq} asked for: ${problem.message}`,
        problem.details,
      );
  }
  const handle = client.workflow.getHandle(runId);
  return sendCallUpdate(
    client,
    runId,
    () => handle.executeUpdate(answerCallInputUpdate, { args: [{ seq, requestId, answer }] }),
    refused,
  );
}
