/**
 * Finding a run the caller owns, which every part of the run service does first (run-service.ts
 * lists those parts). A run belongs to the namespace that started it: asking for another
 * namespace's run, or for a workflow that is not a run, looks exactly like asking for a missing
 * one (404). What only an open run can do is refused with a 409 naming its state, and what a run
 * started from is read from its current execution's first event. Also here, because reads and
 * decisions both use them: the run's link into the Temporal Web UI and the bounded wait for a
 * worker's answer to a query that can do without one.
 */
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from "@temporalio/client";
import { RUN_WORKFLOW_TYPE, SEARCH_ATTRIBUTES, type RunInput, type RunState } from "../shared/index.ts";
import { HttpError, notFound } from "./http-error.ts";
import { readRunStart } from "./run-start.ts";

/** What each part of the run service is handed: the Temporal client and the run's page in the Web UI. */
export interface RunContext {
  client: Client;
  /** The run's page in the Temporal Web UI, when there is one. */
  uiLink: (runId: string) => string | undefined;
}

/** The context of a run service on `options.client`; `options.uiUrl` is the Temporal Web UI's base URL, if any. */
export function runContextOf(options: { client: Client; uiUrl: string | undefined }): RunContext {
  const { client } = options;
  const uiLink = (runId: string) =>
    options.uiUrl ? `${options.uiUrl}/namespaces/${client.options.namespace}/workflows/${runId}` : undefined;
  return { client, uiLink };
}

/** A closed run's state, by Temporal's status of its workflow (an open one's is its own `RewindStatus`). */
export const TEMPORAL_STATUS: Record<string, RunState> = {
  COMPLETED: "completed",
  FAILED: "failed",
  TERMINATED: "failed",
  TIMED_OUT: "failed",
  CANCELLED: "cancelled",
};

/** The run's description; 404 for a missing run, or one of another namespace or workflow type. */
export async function describeOwned(
  { client }: RunContext,
  runId: string,
  namespace: string,
): Promise<WorkflowExecutionDescription> {
  try {
    const description = await client.workflow.getHandle(runId).describe();
    const owner = description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.namespace);
    if (description.type !== RUN_WORKFLOW_TYPE || owner !== namespace) throw notFound(`run ${runId}`);
    return description;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw notFound(`run ${runId}`);
    throw error;
  }
}

/** The run's description when it is still running; 409 naming what it can no longer do otherwise. */
export async function describeRunning(
  context: RunContext,
  runId: string,
  namespace: string,
  noLonger: string,
): Promise<WorkflowExecutionDescription> {
  const d = await describeOwned(context, runId, namespace);
  if (d.status.name !== "RUNNING")
    throw new HttpError(
      409,
      "conflict",
      `run ${runId} is ${TEMPORAL_STATUS[d.status.name] ?? "not running"}; ${noLonger}`,
    );
  return d;
}

/** What the run started from (its current execution's start: continue-as-new keeps script and toolset). */
export async function startOf(context: RunContext, runId: string, namespace: string): Promise<RunInput> {
  const d = await describeOwned(context, runId, namespace);
  const input = await readRunStart(context.client, runId, d.runId);
  if (!input) throw new HttpError(409, "conflict", `run ${runId} has no readable start`);
  return input;
}

const QUERY_TIMEOUT_MS = 3_000;

/** A query's answer, or undefined when it fails or no worker answers within QUERY_TIMEOUT_MS. */
export function withinQueryTimeout<T>(query: Promise<T>): Promise<T | undefined> {
  const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), QUERY_TIMEOUT_MS).unref());
  return Promise.race([query.catch(() => undefined), timeout]);
}

/** Who asks, as a run's journal keeps it: the key's principal and, when the caller said, on whose behalf. */
export function decidedByOf(asked: { principal: string; by?: string | undefined }): { principal: string; by?: string } {
  return { principal: asked.principal, ...(asked.by ? { by: asked.by } : {}) };
}
