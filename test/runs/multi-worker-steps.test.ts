/**
 * Speculative steps with several workers: a run's workflow task moves to a second worker while
 * the first still holds a warm isolate of the run and keeps finishing its calls (and taking
 * speculative steps on that isolate, whose chain the journal then never has). Every run must
 * complete with the right result: a step that can't be adopted is discarded and its call fed.
 * An activity-only worker sharing the first worker's sandbox polls the shared queue, so it keeps
 * taking calls (and speculative steps on the stale isolate) after the first worker stopped.
 */
import type { temporal } from "@temporalio/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer, type TestToolDefinition } from "../helpers/mcp-test-server.ts";
import { jitteredEchoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { createSandbox } from "../../src/sandbox/index.ts";
import { validateAgainstSchema } from "../../src/schemas/index.ts";
import { testWorkers } from "../helpers/test-worker.ts";
import { waitFor } from "../helpers/wait-for.ts";

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

let stack: RewindStack;
let server: TestMcpServer;
let toolset: string;
const workers = testWorkers();
/** What the `more` tool answers: the runs go on round after round until the test has seen them move. */
let keepGoing = true;
const moreTool: TestToolDefinition = {
  name: "more",
  inputSchema: { type: "object" },
  handler: async () => ({ content: [{ type: "text", text: JSON.stringify({ more: keepGoing }) }] }),
};

beforeAll(async () => {
  stack = await startRewindStack({ noWorker: true });
  server = await startMcpServer({
    tools: [jitteredEchoTool(), moreTool],
  });
  toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
});
afterAll(async () => {
  await workers.stopAll();
  await stack?.stop();
  await server?.close();
});

// Rounds of 16 calls in parallel, with no end until the test has seen every run move (\`more\`):
// no run can end while the workflow tasks move, however fast the machine.
const SCRIPT = `import { svc } from "rewind:tools";
export default async function main(input: { tag: string }) {
  let sum = 0;
  let rounds = 0;
  for (;;) {
    const all = (await Promise.all(Array.from({ length: 16 }, (_, i) => svc.echo({ i })))) as { i: number }[];
    for (const a of all) sum += a.i;
    rounds += 1;
    if (!((await svc.more({})) as { more: boolean }).more) break;
  }
  return input.tag + ":" + rounds + ":" + sum;
}`;

async function historyOf(id: string): Promise<HistoryEvent[]> {
  return (await stack.client.workflow.getHandle(id).fetchHistory()).events ?? [];
}

/**
 * After the second worker first took one of the run's workflow tasks: how many of its calls
 * completed, and how many the first worker's activity-only worker started.
 */
function afterSwitch(events: HistoryEvent[]): { completed: number; lateOnFirst: number } {
  let switched = false;
  let completed = 0;
  let lateOnFirst = 0;
  for (const event of events) {
    if (event.workflowTaskStartedEventAttributes?.identity === "second-full") switched = true;
    if (switched && event.activityTaskCompletedEventAttributes) completed += 1;
    if (switched && event.activityTaskStartedEventAttributes?.identity === "first-activities") lateOnFirst += 1;
  }
  return { completed, lateOnFirst };
}

async function completedCalls(id: string): Promise<number> {
  const { body } = await stack.request("GET", `/v1/runs/${id}/journal`);
  return ((body["entries"] ?? []) as { status: string }[]).filter((e) => e.status === "completed").length;
}

describe("speculative steps, across workers", () => {
  it("completes every run when its workflow task moves to another worker while the first keeps finishing calls on its warm isolate", async () => {
    // The first worker's warm isolates outlive its workflow worker: an activity-only worker of the
    // same process keeps taking speculative steps on them after the workflow tasks moved.
    const firstSandbox = createSandbox({ ...stack.config.sandbox, warmSessions: 64, validate: validateAgainstSchema });
    // No calls handed straight back to the worker that scheduled them: every call goes through the
    // shared queue, where the first process's activity-only worker keeps taking some after the move.
    const first = await workers.start(stack, { identity: "first-full", sharedSandbox: firstSandbox, eagerCalls: 0 });
    await workers.start(stack, {
      identity: "first-activities",
      activitiesOnly: true,
      sharedSandbox: firstSandbox,
      eagerCalls: 0,
    });
    const ids = await Promise.all(
      ["a", "b", "c", "d"].map((tag) => startRun(stack, { toolset, script: SCRIPT, input: { tag } })),
    );
    await waitFor("8 completed calls in every run", () => Promise.all(ids.map(completedCalls)), {
      intervalMs: 50,
      until: (counts) => counts.every((n) => n >= 8),
    });
    // Every run is still going, with a warm isolate on the first worker, when the workflow tasks move.
    for (const id of ids) expect((await stack.client.workflow.getHandle(id).describe()).status.name).toBe("RUNNING");
    await workers.start(stack, { identity: "second-full", eagerCalls: 0 });
    await first.shutdown();
    // Tasks go to the second worker at once instead of waiting out the first one's sticky queue.
    for (const id of ids) {
      await stack.client.workflowService
        .resetStickyTaskQueue({ namespace: stack.config.temporal.namespace, execution: { workflowId: id } })
        .catch(() => undefined);
    }
    // The runs go on until each has finished calls after its workflow tasks moved to the second
    // worker, and the first worker's activity-only worker has started some of them.
    await waitFor(
      "calls finished after the move in every run, some started by the first worker's activity-only worker",
      () => Promise.all(ids.map(async (id) => afterSwitch(await historyOf(id)))),
      {
        intervalMs: 100,
        timeoutMs: 60_000,
        until: (runs) => runs.every((r) => r.completed >= 16) && runs.some((r) => r.lateOnFirst > 0),
      },
    );
    keepGoing = false;
    for (const [i, id] of ids.entries()) {
      const done = await waitForRun(stack, id, 90_000);
      expect(done.status, JSON.stringify(done.error)).toBe("completed");
      const [tag, rounds, sum] = String(done.result).split(":");
      expect(tag).toBe(["a", "b", "c", "d"][i]);
      expect(Number(rounds)).toBeGreaterThan(1);
      expect(Number(sum)).toBe(Number(rounds) * 120);
    }
    // It really went that way: workflow tasks on both full workers, and the first worker's
    // activity-only worker finished calls after the second took over the workflow tasks.
    const moved = await Promise.all(ids.map(async (id) => afterSwitch(await historyOf(id))));
    for (const [i, id] of ids.entries()) expect(moved[i]?.completed, id).toBeGreaterThanOrEqual(16);
    expect(moved.reduce((sum, r) => sum + r.lateOnFirst, 0)).toBeGreaterThan(0);
    firstSandbox.dispose();
  }, 180_000);
});
