/**
 * A new run's start request to Temporal: its id (from an idempotency key, so that a repeat names
 * the same workflow, or new), what the Temporal UI shows of it (static summary and details, memo,
 * search attributes with its start time), and its first step, taken beside the API when a worker
 * shares the process. Apart from run-service.ts because it is the one place that builds a run
 * rather than reading or deciding one; the service answers what a repeat of a start returns.
 */
import { createHash } from "node:crypto";
import type { Client } from "@temporalio/client";
import { TypedSearchAttributes } from "@temporalio/common";
import { ulid } from "ulid";
import {
  SANDBOX_RUNTIME_VERSION,
  RUN_ID_PREFIX,
  RUN_WORKFLOW_TYPE,
  SEARCH_ATTRIBUTES,
  type RunInput,
  describeRunStart,
  firstStepInput,
  requiresScriptApproval,
  runCredentialRef,
  type FirstStep,
} from "../shared/index.ts";
import type { RunServiceOptions, StartRunInput } from "./run-service.ts";

/** The run's id: new, or with an idempotency key the same for every start that gives it in the namespace. */
export function runIdFor(namespace: string, idempotencyKey: string | undefined): string {
  if (!idempotencyKey) return RUN_ID_PREFIX + ulid();
  return RUN_ID_PREFIX + createHash("sha256").update(`${namespace}\n${idempotencyKey}`).digest("hex").slice(0, 32);
}

/**
 * Starts the workflow of the new run `runId`; resolves with when it was asked to start (its
 * `RewindStartedAt`). A first step taken for it is given back when the run could not start.
 */
export async function startRunWorkflow(
  client: Client,
  options: RunServiceOptions,
  runId: string,
  input: StartRunInput,
): Promise<Date> {
  const { idempotencyKey: _key, ...rest } = input;
  const requestedAt = new Date();
  const attributes = new TypedSearchAttributes([
    { key: SEARCH_ATTRIBUTES.namespace, value: input.namespace },
    { key: SEARCH_ATTRIBUTES.toolset, value: input.toolsetId },
    { key: SEARCH_ATTRIBUTES.status, value: "running" },
    ...(input.endUser ? [{ key: SEARCH_ATTRIBUTES.endUser, value: input.endUser }] : []),
  ]).updateCopy([{ key: SEARCH_ATTRIBUTES.startedAt, value: requestedAt }]);
  // Start options, not commands of the workflow: what the UI shows needs no patch.
  const { staticSummary, staticDetails, memo } = describeRunStart(rest);
  const firstStep = await firstStepOf(options, runId, input);
  try {
    const handle = await client.workflow.start(RUN_WORKFLOW_TYPE, {
      taskQueue: options.taskQueue,
      workflowId: runId,
      args: [
        {
          ...rest,
          runId,
          runtimeVersion: SANDBOX_RUNTIME_VERSION,
          ...(firstStep ? { firstStep } : {}),
          ...(options.continueAsNewAfterEvents ? { continueAsNewAfterEvents: options.continueAsNewAfterEvents } : {}),
        } satisfies RunInput,
      ],
      typedSearchAttributes: attributes,
      memo: { ...memo },
      staticSummary,
      staticDetails,
      workflowIdReusePolicy: "REJECT_DUPLICATE",
      ...(options.eagerStart ? { requestEagerStart: true } : {}),
    });
    options.metrics?.runStartedByApi(handle.eagerlyStarted ? "eager" : "queued");
    return requestedAt;
  } catch (error) {
    // Never for a repeat: a run with an idempotency key carries no first step.
    if (firstStep) options.forgetFirstStep?.(input.namespace, runId);
    throw error;
  }
}

/**
 * The new run's first step, taken beside the API when a worker shares its process; none for a
 * run that waits for its script's approval, a fork, or a run with an idempotency key (its id is
 * not new: a repeat must not touch the isolate of the run it names). A step that could not be
 * taken is left to the run.
 */
async function firstStepOf(
  options: RunServiceOptions,
  runId: string,
  run: StartRunInput,
): Promise<FirstStep | undefined> {
  if (!options.advanceScript || run.idempotencyKey !== undefined || requiresScriptApproval(run) || run.fork)
    return undefined;
  const startedAt = Date.now();
  try {
    const step = await options.advanceScript(
      firstStepInput(
        { ...run, runId, runtimeVersion: SANDBOX_RUNTIME_VERSION },
        startedAt,
        runCredentialRef(run, startedAt),
      ),
    );
    return step.kind === "needsColdStart" ? undefined : step;
  } catch {
    return undefined;
  }
}
