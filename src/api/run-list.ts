/**
 * `GET /v1/runs`: a namespace's runs through Temporal visibility, newest first, filtered by
 * state, toolset, end user and start time. The filters become one visibility query; every value
 * in it was validated by the route's schema (states from a closed list, toolset ids by pattern,
 * times parsed as dates) and string values are quoted besides, so no input can change the query.
 * A run's state and start come from its search attributes: `RewindStatus` tells a parked run from
 * a running one, `RewindStartedAt` is its first execution's start (Temporal's StartTime is the
 * current execution's, which continue-as-new moves).
 */
import { isGrpcServiceError, type Client } from "@temporalio/client";
import { decodeTypedSearchAttributes } from "@temporalio/common/lib/converter/payload-search-attributes.js";
import type { google, temporal } from "@temporalio/proto";
import { RUN_WORKFLOW_TYPE, SEARCH_ATTRIBUTES, type RunState } from "../shared/index.ts";
import { temporalAnswers } from "../temporal/index.ts";
import { HttpError } from "./http-error.ts";
import type { RunView } from "./run-service.ts";

export interface RunListFilters {
  status?: RunState | undefined;
  toolset?: string | undefined;
  endUser?: string | undefined;
  startedAfter?: Date | undefined;
  startedBefore?: Date | undefined;
}

/** A run as the list shows it: its view without what only the run itself can answer. */
export type RunListItem = Pick<
  RunView,
  "id" | "status" | "toolset" | "endUser" | "startedAt" | "closedAt" | "temporalUrl"
>;

/** A string literal of Temporal's visibility query language: quotes and backslashes escaped. */
export function quoteVisibility(value: string): string {
  return `'${value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

const { namespace: NS, toolset: TOOLSET, endUser: END_USER, status: STATUS, startedAt: STARTED_AT } = SEARCH_ATTRIBUTES;

/** Each state as visibility sees it: closed runs by Temporal's status, open ones by `RewindStatus`. */
const STATE_CLAUSES: Record<RunState, string> = {
  running: `ExecutionStatus = 'Running' AND ${STATUS.name} != 'parked'`,
  parked: `ExecutionStatus = 'Running' AND ${STATUS.name} = 'parked'`,
  completed: `ExecutionStatus = 'Completed' AND ${STATUS.name} != 'rolledBack'`,
  failed: "ExecutionStatus IN ('Failed', 'Terminated', 'TimedOut')",
  cancelled: "ExecutionStatus = 'Canceled'",
  // A rolled-back run completes (its result is the rollback): RewindStatus tells it apart.
  rolledBack: `ExecutionStatus = 'Completed' AND ${STATUS.name} = 'rolledBack'`,
};

/** Runs started before `RewindStartedAt` existed have only their execution's StartTime. */
function startedClause(operator: ">=" | "<", at: Date): string {
  const time = quoteVisibility(at.toISOString());
  return `(${STARTED_AT.name} ${operator} ${time} OR (${STARTED_AT.name} IS NULL AND StartTime ${operator} ${time}))`;
}

/** The visibility query of a namespace's runs (one row per run: executions closed by continue-as-new are left out). */
export function runsQuery(namespace: string, filters: RunListFilters = {}): string {
  return [
    `WorkflowType = ${quoteVisibility(RUN_WORKFLOW_TYPE)}`,
    `${NS.name} = ${quoteVisibility(namespace)}`,
    "ExecutionStatus != 'ContinuedAsNew'",
    ...(filters.status ? [STATE_CLAUSES[filters.status]] : []),
    ...(filters.toolset ? [`${TOOLSET.name} = ${quoteVisibility(filters.toolset)}`] : []),
    ...(filters.endUser ? [`${END_USER.name} = ${quoteVisibility(filters.endUser)}`] : []),
    ...(filters.startedAfter ? [startedClause(">=", filters.startedAfter)] : []),
    ...(filters.startedBefore ? [startedClause("<", filters.startedBefore)] : []),
  ].join(" AND ");
}

const CLOSED: Record<string, RunState> = { 2: "completed", 3: "failed", 4: "cancelled", 5: "failed", 7: "failed" };
const PAGE_TOKEN_DEADLINE_MS = 2_000;

const isoOf = (ts: google.protobuf.ITimestamp | null | undefined): string | undefined =>
  ts?.seconds ? new Date(Number(ts.seconds) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6)).toISOString() : undefined;

function itemOf(
  e: temporal.api.workflow.v1.IWorkflowExecutionInfo,
  uiLink: (id: string) => string | undefined,
): RunListItem {
  const attributes = decodeTypedSearchAttributes(e.searchAttributes?.indexedFields);
  const id = e.execution?.workflowId ?? "";
  const closed = CLOSED[e.status ?? 0];
  const firstStart = attributes.get(STARTED_AT);
  const rolledBack = closed === "completed" && attributes.get(STATUS) === "rolledBack";
  return {
    id,
    status: rolledBack ? "rolledBack" : (closed ?? (attributes.get(STATUS) === "parked" ? "parked" : "running")),
    toolset: attributes.get(TOOLSET),
    endUser: attributes.get(END_USER),
    startedAt: firstStart ? firstStart.toISOString() : isoOf(e.startTime),
    closedAt: isoOf(e.closeTime),
    temporalUrl: uiLink(id),
  };
}

export interface RunListPage {
  runs: RunListItem[];
  nextPageToken: string | undefined;
}

export async function listRuns(
  client: Client,
  uiLink: (id: string) => string | undefined,
  namespace: string,
  page: { pageSize: number; pageToken?: string | undefined },
  filters: RunListFilters,
): Promise<RunListPage> {
  const { pageSize, pageToken } = page;
  const request = {
    namespace: client.options.namespace,
    pageSize,
    nextPageToken: pageToken ? Buffer.from(pageToken, "base64url") : undefined,
    query: runsQuery(namespace, filters),
  };
  // Temporal answers a token it cannot read with UNKNOWN, which the client retries for ~20 s:
  // with a token, the call gets a deadline, and its failure is the caller's bad token.
  const response = !pageToken
    ? await client.workflowService.listWorkflowExecutions(request)
    : await client.connection
        .withDeadline(Date.now() + PAGE_TOKEN_DEADLINE_MS, () => client.workflowService.listWorkflowExecutions(request))
        .catch(async (error: unknown) => {
          // A token Temporal can't read ends at the deadline too: it is the caller's only if Temporal answers.
          if (isGrpcServiceError(error) && (await temporalAnswers(client.connection)))
            throw new HttpError(400, "badRequest", "pageToken is not a nextPageToken this API answered");
          throw error;
        });
  const runs = (response.executions ?? []).map((e) => itemOf(e, uiLink));
  const next =
    response.nextPageToken && response.nextPageToken.length > 0
      ? Buffer.from(response.nextPageToken).toString("base64url")
      : undefined;
  return { runs, nextPageToken: next };
}
