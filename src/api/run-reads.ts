/**
 * Reading runs the caller owns: a run as the API shows it (`RunView`: its state, from Temporal's
 * status once it closed and its own `RewindStatus` while open, and as its state has them its
 * result, failure, parked calls and rollback), a page of its journal, a page of the namespace's
 * runs (run-list.ts), and cancelling a run, which answers the view it leaves. Apart from the
 * decisions (call-decisions.ts, run-decisions.ts) because nothing here sends the run an update
 * or a signal: cancelling is Temporal's cancellation of its workflow.
 */
import { WorkflowFailedError, type WorkflowExecutionDescription } from "@temporalio/client";
import {
  SEARCH_ATTRIBUTES,
  type JournalView,
  type RunFailure,
  type RunState,
  type RollbackSummary,
  type RunStatus,
  type ScriptApprovalView,
} from "../shared/index.ts";
import { getStatusQuery } from "../workflows/messages.ts";
import { runFailureOf } from "./run-failure.ts";
import { listRuns, type RunListFilters, type RunListPage } from "./run-list.ts";
import { describeOwned, TEMPORAL_STATUS, withinQueryTimeout, type RunContext } from "./run-lookup.ts";
import { endedRolledBack, rollbackInProgress } from "./run-rollback.ts";
import { readJournal } from "./worker-query.ts";

export interface RunView {
  id: string;
  status: RunState;
  toolset: string | undefined;
  endUser: string | undefined;
  startedAt: string | undefined;
  closedAt: string | undefined;
  result?: unknown;
  error?: RunFailure;
  /** Calls waiting for the harness (approval…), while the run is parked. */
  parked?: { seq: number; tool: string; args: unknown; reason: string; details?: Record<string, unknown> }[];
  /** Set once a rollback began: in progress, or how the run ended `rolledBack`. */
  rollback?: RollbackSummary;
  /** While the run waits, before its first step, for its script's approval. */
  scriptApproval?: ScriptApprovalView;
  temporalUrl: string | undefined;
}

/** When a run started: its first execution's start (`RewindStartedAt`), else, for runs older than it, this execution's. */
function startedAtOf(d: WorkflowExecutionDescription): Date {
  return d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.startedAt) ?? d.startTime;
}

/** Parked calls come from the run's own state; without a worker to answer, they are left out. */
async function parkedStatus({ client }: RunContext, runId: string): Promise<RunStatus | undefined> {
  return withinQueryTimeout(client.workflow.getHandle(runId).query(getStatusQuery));
}

async function failureOf({ client }: RunContext, runId: string): Promise<RunView["error"]> {
  try {
    await client.workflow.getHandle(runId).result();
    return undefined;
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    return runFailureOf(error.cause, error.message);
  }
}

/**
 * What a run described as parked shows, from its status query. The query is asked after the
 * description, and a call held for input (a server's question) is released when its attempt
 * ends: a run whose last parked call went back to running in between answers `running` with no
 * parked calls, and is shown running rather than parked with an empty list. Without an answer
 * (no worker in time) the run stays parked, its calls unlisted.
 */
export function parkedView(
  queried: RunStatus | undefined,
): Pick<RunView, "status"> & Partial<Pick<RunView, "parked" | "scriptApproval">> {
  if (!queried) return { status: "parked" };
  if (queried.state === "running") return { status: "running" };
  return {
    status: "parked",
    parked: queried.parked,
    ...(queried.scriptApproval ? { scriptApproval: queried.scriptApproval } : {}),
  };
}

/** The run as the API shows it. */
export async function getRun(context: RunContext, runId: string, namespace: string): Promise<RunView> {
  const { client, uiLink } = context;
  const d = await describeOwned(context, runId, namespace);
  const rolledBack = endedRolledBack(d);
  const closed = rolledBack ? "rolledBack" : TEMPORAL_STATUS[d.status.name];
  const view: RunView = {
    id: runId,
    status: closed ?? (d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.status) === "parked" ? "parked" : "running"),
    toolset: d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.toolset),
    endUser: d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.endUser),
    startedAt: startedAtOf(d).toISOString(),
    closedAt: d.closeTime?.toISOString(),
    temporalUrl: uiLink(runId),
  };
  if (view.status === "parked") Object.assign(view, parkedView(await parkedStatus(context, runId)));
  if (closed === "completed") view.result = await client.workflow.getHandle(runId).result();
  if (closed === "failed") view.error = await failureOf(context, runId);
  // A rolled-back run completed with its rollback as its result.
  if (rolledBack) view.rollback = (await client.workflow.getHandle(runId).result()) as RollbackSummary;
  if (!closed) {
    const rollback = await rollbackInProgress(client, runId, d, withinQueryTimeout);
    if (rollback) view.rollback = rollback;
  }
  return view;
}

/** The SDK's query of a workflow's metadata, whose `currentDetails` a run keeps up to date (run-details.ts). */
const METADATA_QUERY = "__temporal_workflow_metadata";

/**
 * What the run says it is doing or waiting for, one line per thing (its current details, as the
 * Temporal Web UI shows them); undefined when no worker answers in time.
 */
export async function readCurrentDetails(
  context: RunContext,
  runId: string,
  namespace: string,
): Promise<string | undefined> {
  await describeOwned(context, runId, namespace);
  const metadata = await withinQueryTimeout(
    context.client.workflow.getHandle(runId).query<{ currentDetails?: unknown }>(METADATA_QUERY),
  );
  return typeof metadata?.currentDetails === "string" ? metadata.currentDetails : undefined;
}

/** Cancels the run if it is still running; answers its view either way. */
export async function cancelRun(context: RunContext, runId: string, namespace: string): Promise<RunView> {
  const d = await describeOwned(context, runId, namespace);
  if (d.status.name === "RUNNING") await context.client.workflow.getHandle(runId).cancel();
  return getRun(context, runId, namespace);
}

/** The run's journal, a page of entries at a time (answered by a worker, from its state). */
export async function journalPage(
  context: RunContext,
  runId: string,
  namespace: string,
  afterSeq: number,
  limit: number,
  maxBytes?: number,
): Promise<JournalView & { nextAfterSeq?: number }> {
  await describeOwned(context, runId, namespace);
  const view = await readJournal(context.client, runId, {
    afterSeq,
    limit: limit + 1,
    ...(maxBytes === undefined ? {} : { maxBytes }),
  });
  const more = view.entries.length > limit || view.truncated === true;
  const entries = view.entries.slice(0, limit);
  const last = entries.at(-1);
  return {
    entries,
    completionOrder: view.completionOrder,
    ...(view.fork ? { fork: view.fork } : {}),
    ...(view.scriptApproval ? { scriptApproval: view.scriptApproval } : {}),
    ...(more && last ? { nextAfterSeq: last.seq } : {}),
  };
}

/** A page of the namespace's runs, newest first, filtered (run-list.ts). */
export async function listRunPage(
  { client, uiLink }: RunContext,
  namespace: string,
  page: { pageSize: number; pageToken?: string | undefined },
  filters: RunListFilters = {},
): Promise<RunListPage> {
  return listRuns(client, uiLink, namespace, page, filters);
}
