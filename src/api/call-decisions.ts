/**
 * What the harness tells a running run about one of its calls: the decision on a call parked for
 * approval or on an unknown outcome (approve, reject, resume, resolve, retry, fail), and the answer
 * to the input the call's server asked for (an elicitation); and the read such a decision starts
 * from, a call and why it is parked. Each first checks that the run is the caller's and still
 * running (409 naming what it can no longer do otherwise); the updates go through
 * call-updates.ts, which turns the run's refusal of a call that is not waiting into a 409.
 */
import { SEARCH_ATTRIBUTES, type ElicitationAnswer, type JsonSchema } from "../shared/index.ts";
import { validateAgainstSchema } from "../schemas/index.ts";
import {
  answerCallInputUpdate,
  approveCallUpdate,
  failCallUpdate,
  getStatusQuery,
  rejectCallUpdate,
  resolveCallUpdate,
  resumeCallUpdate,
  retryCallUpdate,
  type CallDecided,
} from "../workflows/messages.ts";
import { sendCallUpdate } from "./call-updates.ts";
import { HttpError, notFound } from "./http-error.ts";
import { decidedByOf, describeRunning, withinQueryTimeout, type RunContext } from "./run-lookup.ts";
import { noWorkerAnswered } from "./worker-query.ts";

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

/**
 * Approves, rejects or resumes a parked call, recording who decided in its journal entry;
 * 409 when the call is not waiting for a decision.
 */
export async function sendCallDecision(
  context: RunContext,
  runId: string,
  namespace: string,
  seq: number,
  decision: CallDecisionInput,
): Promise<CallDecided> {
  const { client } = context;
  await describeRunning(context, runId, namespace, "its calls can no longer be decided");
  const handle = client.workflow.getHandle(runId);
  const decidedBy = decidedByOf(decision);
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

/**
 * A running run's call and why it is parked, if it is, with the run's toolset: 404 for a call
 * the run never made, 409 once the run ended.
 */
export async function readCallWaiting(
  context: RunContext,
  runId: string,
  namespace: string,
  seq: number,
): Promise<CallWaiting> {
  const d = await describeRunning(context, runId, namespace, "its calls can no longer be decided");
  const status = await withinQueryTimeout(context.client.workflow.getHandle(runId).query(getStatusQuery));
  if (!status) throw noWorkerAnswered(runId);
  if (seq > status.calls.total) throw notFound(`call ${seq} of run ${runId}`);
  const parked = status.parked.find((p) => p.seq === seq);
  return {
    toolsetId: String(d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.toolset) ?? ""),
    ...(parked ? { parked: { seq, tool: parked.tool, reason: parked.reason } } : {}),
  };
}

/**
 * Answers the input a call's server asked for (an elicitation): 404 for a call the run never
 * made, 409 when the call waits for no input, 422 when accepted content does not fit the
 * schema the server asked for.
 */
export async function sendInputAnswer(
  context: RunContext,
  runId: string,
  namespace: string,
  seq: number,
  answer: ElicitationAnswer,
): Promise<{ seq: number }> {
  const { client } = context;
  await describeRunning(context, runId, namespace, "its calls can no longer be answered");
  const status = await withinQueryTimeout(client.workflow.getHandle(runId).query(getStatusQuery));
  if (!status) throw noWorkerAnswered(runId);
  if (seq > status.calls.total) throw notFound(`call ${seq} of run ${runId}`);
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
