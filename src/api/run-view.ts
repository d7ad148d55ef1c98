/**
 * A run as the API shows it (`RunView`): its state (Temporal's status once it closed, its own
 * `RewindStatus` while it is open), toolset, end user, start and close times, and, as its state
 * has them, its result, failure, parked calls and rollback. Apart from run-service.ts because it
 * is how a run's description (or, for a run just started, its start) becomes the API's view; the
 * service checks first that the run is the caller's.
 */
import { WorkflowFailedError, type Client, type WorkflowExecutionDescription } from "@temporalio/client";
import {
  SEARCH_ATTRIBUTES,
  type RunFailure,
  type RunState,
  type RollbackSummary,
  type RunInput,
  type RunStatus,
  type ScriptApprovalView,
} from "../shared/index.ts";
import { getStatusQuery } from "../workflows/messages.ts";
import { runFailureOf } from "./run-failure.ts";
import { endedRolledBack, rollbackInProgress } from "./run-rollback.ts";
import { withinQueryTimeout } from "./worker-query.ts";

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
  parked?: { seq: number; tool: string; args: unknown; reason: string }[];
  /** Set once a rollback began: in progress, or how the run ended `rolledBack`. */
  rollback?: RollbackSummary;
  /** While the run waits, before its first step, for its script's approval. */
  scriptApproval?: ScriptApprovalView;
  temporalUrl: string | undefined;
}

export const TEMPORAL_STATUS: Record<string, RunState> = {
  COMPLETED: "completed",
  FAILED: "failed",
  TERMINATED: "failed",
  TIMED_OUT: "failed",
  CANCELLED: "cancelled",
};

/** When a run started: its first execution's start (`RewindStartedAt`), else, for runs older than it, this execution's. */
function startedAtOf(d: WorkflowExecutionDescription): Date {
  return d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.startedAt) ?? d.startTime;
}

/** A new run's view, known without asking Temporal: running, just started (asked at `requestedAt`). */
export function newRunView(
  runId: string,
  input: Pick<RunInput, "toolsetId" | "endUser">,
  requestedAt: Date,
  temporalUrl: string | undefined,
): RunView {
  return {
    id: runId,
    status: "running",
    toolset: input.toolsetId,
    endUser: input.endUser,
    startedAt: requestedAt.toISOString(),
    closedAt: undefined,
    temporalUrl,
  };
}

/** The view of run `runId`, which `d` describes; `temporalUrl` is its page in the Temporal Web UI. */
export async function readRunView(
  client: Client,
  runId: string,
  d: WorkflowExecutionDescription,
  temporalUrl: string | undefined,
): Promise<RunView> {
  const rolledBack = endedRolledBack(d);
  const closed = rolledBack ? "rolledBack" : TEMPORAL_STATUS[d.status.name];
  const view: RunView = {
    id: runId,
    status: closed ?? (d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.status) === "parked" ? "parked" : "running"),
    toolset: d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.toolset),
    endUser: d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.endUser),
    startedAt: startedAtOf(d).toISOString(),
    closedAt: d.closeTime?.toISOString(),
    temporalUrl,
  };
  if (view.status === "parked") {
    const parked = await parkedStatus(client, runId);
    view.parked = parked?.parked;
    if (parked?.scriptApproval) view.scriptApproval = parked.scriptApproval;
  }
  if (closed === "completed") view.result = await client.workflow.getHandle(runId).result();
  if (closed === "failed") view.error = await failureOf(client, runId);
  // A rolled-back run completed with its rollback as its result.
  if (rolledBack) view.rollback = (await client.workflow.getHandle(runId).result()) as RollbackSummary;
  if (!closed) {
    const rollback = await rollbackInProgress(client, runId, d, withinQueryTimeout);
    if (rollback) view.rollback = rollback;
  }
  return view;
}

/** Parked calls come from the run's own state; without a worker to answer, they are left out. */
async function parkedStatus(client: Client, runId: string): Promise<RunStatus | undefined> {
  return withinQueryTimeout(client.workflow.getHandle(runId).query(getStatusQuery));
}

async function failureOf(client: Client, runId: string): Promise<RunView["error"]> {
  try {
    await client.workflow.getHandle(runId).result();
    return undefined;
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    return runFailureOf(error.cause, error.message);
  }
}
