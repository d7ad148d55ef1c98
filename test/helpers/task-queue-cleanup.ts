/**
 * What a chaos round or a bench run leaves behind on a cluster it shares with others: every
 * workflow still open on its own task queues — the records of its toolsets and namespace
 * settings (which stay open by design), a stuck run, an event still being delivered — is
 * terminated, so nothing of it lingers. Nothing outside those task queues is looked at.
 * Histories stay readable until the namespace's retention ends.
 */
import type { Client } from "@temporalio/client";

/** Visibility may show a workflow a moment after it started: look again until none is open. */
const SETTLE_MS = 10_000;

/** Terminates the workflows open on `taskQueues`, giving `reason`; answers how many. */
export async function terminateOpenWorkflows(
  client: Client,
  taskQueues: string[],
  reason: string,
  log: (line: string) => void,
): Promise<number> {
  const queues = taskQueues.map((queue) => `TaskQueue = '${queue.replace(/'/g, "")}'`).join(" OR ");
  const query = `(${queues}) AND ExecutionStatus = 'Running'`;
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
        .terminate(reason)
        .catch((error: unknown) => {
          // Ended by itself meanwhile: nothing left to do.
          if ((error as { name?: string }).name !== "WorkflowNotFoundError") throw error;
        });
      ended.add(id);
    }
    if (Date.now() >= until) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  log(`cleanup: terminated ${ended.size} workflow(s) left open on ${taskQueues.join(", ")}`);
  return ended.size;
}
