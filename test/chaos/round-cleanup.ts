/**
 * What a round leaves behind on a cluster it shares with others: every workflow still open on
 * the round's own task queue — its toolset's and namespace's records (which stay open by
 * design), a stuck run, an event still being delivered — is terminated, so nothing of the round
 * lingers. Nothing outside that task queue is looked at. Histories stay readable until the
 * namespace's retention ends.
 */
import type { Client } from "@temporalio/client";

const REASON = "the chaos round that started it is over";
/** Visibility may show a workflow a moment after it started: look again until none is open. */
const SETTLE_MS = 10_000;

/** Terminates the workflows open on `taskQueue`; answers how many. */
export async function cleanUpRound(client: Client, taskQueue: string, log: (line: string) => void): Promise<number> {
  const query = `TaskQueue = '${taskQueue.replace(/'/g, "")}' AND ExecutionStatus = 'Running'`;
  const ended = new Set<string>();
  const until = Date.now() + SETTLE_MS;
  for (;;) {
    const open: string[] = [];
    for await (const execution of client.workflow.list({ query })) open.push(execution.workflowId);
    const left = open.filter((id) => !ended.has(id));
    if (left.length === 0 && (ended.size > 0 || Date.now() >= until)) break;
    for (const id of left) {
      await client.workflow
        .getHandle(id)
        .terminate(REASON)
        .catch((error: unknown) => {
          // Ended by itself meanwhile: nothing left to do.
          if ((error as { name?: string }).name !== "WorkflowNotFoundError") throw error;
        });
      ended.add(id);
    }
    if (Date.now() >= until) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  log(`cleanup: terminated ${ended.size} workflow(s) left open on ${taskQueue}`);
  return ended.size;
}
