/**
 * A run's MCP calls that have company (issued together, or while other calls are unfinished) go
 * to the worker that holds its isolate (its session queue), so with several workers their results
 * come back to that isolate and its speculative steps are adopted instead of discarded (each
 * discard costs a cold replay of the whole journal). A call alone goes to the shared queue, where
 * Temporal hands it to the worker completing the workflow task. When the session's worker is
 * gone, a call waits on its queue for 5 s at most, then goes to the shared queue and the run goes
 * on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { temporal } from "@temporalio/proto";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { testWorkers } from "../helpers/test-worker.ts";
import { spawnWorker, type WorkerProcess } from "../helpers/worker-process.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { createSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { validateAgainstSchema } from "../../src/schemas/index.ts";
import type { RewindWorkerOptions } from "../../src/worker/create-worker.ts";

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

let stack: RewindStack;
let server: TestMcpServer;
let toolset: string;
const workers = testWorkers();
const processes: WorkerProcess[] = [];

beforeAll(async () => {
  stack = await startRewindStack({ noWorker: true });
  server = await startMcpServer({
    tools: [
      {
        name: "echo",
        inputSchema: { type: "object" },
        // Jitter, so results of parallel calls reach history in another order than their steps were taken.
        handler: async (args) => {
          await new Promise((resolve) => setTimeout(resolve, 2 + Math.floor(Math.random() * 15)));
          return { content: [{ type: "text", text: JSON.stringify(args) }] };
        },
      },
      {
        name: "slow",
        inputSchema: { type: "object" },
        handler: async (args) => {
          await new Promise((resolve) => setTimeout(resolve, 250));
          return { content: [{ type: "text", text: JSON.stringify(args) }] };
        },
      },
    ],
  });
  toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
}, 120_000);
afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill()));
  await workers.stopAll();
  await stack?.stop();
  await server?.close();
});

/** A full worker on the stack's queue, whose sandbox counts its cold and warm steps. */
async function startWorker(identity: string, extra: Partial<RewindWorkerOptions> = {}) {
  const steps = { cold: 0, warm: 0 };
  const sandbox: Sandbox = createSandbox({
    ...stack.config.sandbox,
    warmSessions: 64,
    validate: validateAgainstSchema,
    metrics: { step: (start) => void (steps[start] += 1) },
  });
  const worker = await workers.start(stack, { identity, sharedSandbox: sandbox, ...extra }, () => sandbox.dispose());
  return { worker, steps };
}

async function historyOf(id: string): Promise<HistoryEvent[]> {
  return (await stack.client.workflow.getHandle(id).fetchHistory()).events ?? [];
}

/** Every MCP call's scheduled queue and the identity of the worker that started it, by event id. */
function callPlacements(events: HistoryEvent[]): { queue: string; startedBy: string | undefined }[] {
  const scheduled = new Map<string, string>();
  const placements = new Map<string, { queue: string; startedBy: string | undefined }>();
  for (const event of events) {
    const attrs = event.activityTaskScheduledEventAttributes;
    if (attrs?.activityType?.name === "callMcpTool") {
      const id = String(event.eventId);
      scheduled.set(id, attrs.taskQueue?.name ?? "");
      placements.set(id, { queue: attrs.taskQueue?.name ?? "", startedBy: undefined });
    }
    const started = event.activityTaskStartedEventAttributes;
    if (started) {
      const placement = placements.get(String(started.scheduledEventId));
      if (placement) placement.startedBy = started.identity ?? undefined;
    }
  }
  return [...placements.values()];
}

const BUSY_SCRIPT = `import { svc } from "rewind:tools";
export default async function main(input: { tag: string }) {
  let sum = 0;
  for (let i = 0; i < 30; i++) sum += ((await svc.echo({ i })) as { i: number }).i;
  for (let round = 0; round < 2; round++) {
    const all = (await Promise.all(Array.from({ length: 16 }, (_, i) => svc.echo({ i })))) as { i: number }[];
    for (const a of all) sum += a.i;
  }
  for (let i = 0; i < 30; i++) sum += ((await svc.echo({ i })) as { i: number }).i;
  return input.tag + ":" + sum;
}`;
const BUSY_SUM = 435 + 2 * 120 + 435;

describe("calls follow the run's session", () => {
  it("sends a run's parallel MCP calls to the worker holding its isolate, with two workers on the queue: one cold step per run", async () => {
    const first = await startWorker("session-a");
    const second = await startWorker("session-b");
    const owners = new Map([
      [first.worker.sessionQueue, "session-a"],
      [second.worker.sessionQueue, "session-b"],
    ]);
    const tags = ["a", "b", "c", "d", "e", "f"];
    const ids = await Promise.all(tags.map((tag) => startRun(stack, { toolset, script: BUSY_SCRIPT, input: { tag } })));
    for (const [i, id] of ids.entries()) {
      const done = await waitForRun(stack, id, 120_000);
      expect(done.status, JSON.stringify(done.error)).toBe("completed");
      expect(done.result).toBe(`${tags[i]}:${BUSY_SUM}`);
    }
    const holders = new Set<string>();
    for (const id of ids) {
      const placements = callPlacements(await historyOf(id));
      expect(placements).toHaveLength(92);
      // 30 calls alone, 2 × 16 together, 30 alone: those together on a session queue, started by
      // the worker whose queue it is; those alone on the shared queue.
      const together = placements.slice(30, 62);
      for (const { queue, startedBy } of together) {
        expect(owners.has(queue), `${id}: ${queue}`).toBe(true);
        expect(startedBy, `${id}: ${queue}`).toBe(owners.get(queue));
        holders.add(startedBy ?? "");
      }
      for (const { queue } of [...placements.slice(0, 30), ...placements.slice(62)])
        expect(queue, id).toBe(stack.config.temporal.taskQueue);
    }
    // Both workers held runs, and no speculative step was lost to the other worker's results:
    // every run started cold once and then stepped warm.
    expect(holders.size).toBe(2);
    const cold = first.steps.cold + second.steps.cold;
    expect(cold).toBe(ids.length);
    expect(first.steps.warm + second.steps.warm).toBeGreaterThan(0);
  }, 240_000);

  it("sends a call to the shared queue when the worker holding the isolate was killed, and the run completes", async () => {
    // Only the worker process takes the run's first steps; an in-process worker arrives after the kill.
    await workers.shutdownStarted();
    const env = {
      TEMPORAL_ADDRESS: stack.address,
      REWIND_TASK_QUEUE: stack.config.temporal.taskQueue,
      REWIND_STATE_DIR: stack.config.stateDir,
    };
    const doomed = await spawnWorker(env);
    processes.push(doomed);
    const id = await startRun(stack, {
      toolset,
      script: `import { svc } from "rewind:tools";
export default async function main() {
  let sum = 0;
  for (let i = 0; i < 12; i += 2) {
    const pair = (await Promise.all([svc.slow({ i }), svc.slow({ i: i + 1 })])) as { i: number }[];
    for (const { i: n } of pair) sum += n;
  }
  return sum;
}`,
    });
    await waitFor("4 calls scheduled", async () => callPlacements(await historyOf(id)).length, {
      intervalMs: 50,
      until: (n) => n >= 4,
    });
    const before = callPlacements(await historyOf(id));
    const doomedQueue = before[0]?.queue ?? "";
    expect(doomedQueue).toMatch(/-session-/);
    expect((await stack.client.workflow.getHandle(id).describe()).status.name).toBe("RUNNING");
    await doomed.kill("SIGKILL");
    const survivor = await startWorker("survivor");
    const done = await waitForRun(stack, id, 120_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toBe(66);
    const events = await historyOf(id);
    // A call waited on the killed worker's queue, was never started there, and went to the shared queue.
    const neverStarted = events.filter(
      (e) =>
        e.activityTaskTimedOutEventAttributes?.failure?.timeoutFailureInfo?.timeoutType ===
        temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START,
    );
    expect(neverStarted.length).toBeGreaterThan(0);
    const after = callPlacements(events).slice(before.length);
    expect(after.some(({ queue }) => queue === stack.config.temporal.taskQueue)).toBe(true);
    // Once the survivor took a step, the calls followed it to its own queue.
    expect(after.at(-1)?.queue).toBe(survivor.worker.sessionQueue);
    expect(after.at(-1)?.startedBy).toBe("survivor");
  }, 180_000);
});
