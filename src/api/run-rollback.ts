/**
 * The API's side of a rollback: asks an open run to roll back (`rollbackRun` update, refused by
 * the run once it is ending or already rolling back → 409), and reads a run's rollback back —
 * from its result once it ended `rolledBack` (the workflow completes with the rollback), from its
 * status query while reverts are made (its memo says one began, so other runs cost no query).
 */
import type { Client, WorkflowExecutionDescription } from "@temporalio/client";
import { SEARCH_ATTRIBUTES, type RollbackSummary } from "../shared/index.ts";
import { getStatusQuery, rollbackRunUpdate } from "../workflows/messages.ts";
import { sendCallUpdate } from "./call-updates.ts";
import { decidedByOf } from "./run-lookup.ts";

/** The memo key a run sets as its rollback begins. */
export const ROLLBACK_MEMO = "rollback";

export interface RollbackAsked {
  principal: string;
  by?: string | undefined;
  reason?: string | undefined;
}

export async function askRollback(client: Client, runId: string, asked: RollbackAsked): Promise<RollbackSummary> {
  const handle = client.workflow.getHandle(runId);
  const decidedBy = decidedByOf(asked);
  return sendCallUpdate(
    client,
    runId,
    () =>
      handle.executeUpdate(rollbackRunUpdate, {
        args: [{ decidedBy, ...(asked.reason ? { reason: asked.reason } : {}) }],
      }),
    `run ${runId} can no longer be rolled back: it is rolling back already, or ending`,
  );
}

/** Whether a closed, completed run ended rolled back (its RewindStatus says so). */
export function endedRolledBack(d: WorkflowExecutionDescription): boolean {
  return d.status.name === "COMPLETED" && d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.status) === "rolledBack";
}

/** An open run's rollback in progress, if one began; undefined when none did or no worker answered in time. */
export async function rollbackInProgress(
  client: Client,
  runId: string,
  d: WorkflowExecutionDescription,
  query: <T>(answer: Promise<T>) => Promise<T | undefined>,
): Promise<RollbackSummary | undefined> {
  if (d.memo?.[ROLLBACK_MEMO] === undefined) return undefined;
  return (await query(client.workflow.getHandle(runId).query(getStatusQuery)))?.rollback;
}
