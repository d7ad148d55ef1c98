/**
 * Starting a run: the one part of the run service that makes a workflow rather than reading or
 * deciding one. The run's id is new, or with an idempotency key the same for every start that
 * gives it in the namespace, so that a repeat names the run the first start made. Each run starts
 * with what the Temporal UI shows of it: a static summary and details, a memo (toolset, end user)
 * and its start time as a search attribute. With a worker in the API's process, the run's first
 * step is taken here before the start and carried in its input.
 */
import { createHash } from "node:crypto";
import { WorkflowExecutionAlreadyStartedError } from "@temporalio/client";
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
import { describeOwned, type RunContext } from "./run-lookup.ts";
import type { RunView } from "./run-reads.ts";
import type { RunServiceOptions } from "./run-service.ts";

export type StartRunInput = Omit<RunInput, "runId"> & { idempotencyKey?: string };

/** The run's id: new, or with an idempotency key the same for every start that gives it in the namespace. */
function runIdFor(namespace: string, idempotencyKey: string | undefined): string {
  if (!idempotencyKey) return RUN_ID_PREFIX + ulid();
  return RUN_ID_PREFIX + createHash("sha256").update(`${namespace}\n${idempotencyKey}`).digest("hex").slice(0, 32);
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

/**
 * Starts a run; with an idempotency key, a repeat returns the run the first call started.
 * A new run's view is known without asking Temporal (running, just started), which saves
 * every start a round trip; a repeat's is looked up.
 */
export async function startRun(
  context: RunContext,
  options: RunServiceOptions,
  input: StartRunInput,
): Promise<{ id: string; created: boolean; view?: RunView }> {
  const { client, uiLink } = context;
  const runId = runIdFor(input.namespace, input.idempotencyKey);
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
    const view: RunView = {
      id: runId,
      status: "running",
      toolset: input.toolsetId,
      endUser: input.endUser,
      startedAt: requestedAt.toISOString(),
      closedAt: undefined,
      temporalUrl: uiLink(runId),
    };
    return { id: runId, created: true, view };
  } catch (error) {
    // Never for a repeat: a run with an idempotency key carries no first step.
    if (firstStep) options.forgetFirstStep?.(input.namespace, runId);
    if (error instanceof WorkflowExecutionAlreadyStartedError && input.idempotencyKey) {
      await describeOwned(context, runId, input.namespace);
      return { id: runId, created: false };
    }
    throw error;
  }
}
