/**
 * A run's MCP calls go to the shared queue, where Temporal hands them straight back to the worker
 * holding the run's isolate (eager dispatch: as many as `eagerCalls`, by default all a run may
 * have in flight). Calls beyond that go through the queue's matching, where any worker may take
 * them (the tests that follow them give their workers 3, Temporal's default), until a result comes back from another worker: then
 * its calls that have company (issued together, or while other calls are unfinished) go to the
 * session queue of the worker holding the isolate, so their results come back to it and its
 * speculative steps are adopted instead of discarded (each discard costs a cold replay of the
 * whole journal). A call alone stays on the shared queue. When the session's worker is gone, a
 * call waits on its queue for 5 s at most, then goes to the shared queue and the run goes on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { temporal } from "@temporalio/proto";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { jitteredEchoTool } from "../helpers/mcp-test-tools.ts";
import { acceleratorsOn, startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
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
      jitteredEchoTool(),
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
async function startWorker(identity: string, extra: Partial<RewindWorkerOptions> = { eagerCalls: 3 }) {
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

/** Starts one BUSY_SCRIPT run per tag at once and waits for each to complete with its sum; answers their ids. */
async function runBusyScripts(tags: string[]): Promise<string[]> {
  const ids = await Promise.all(tags.map((tag) => startRun(stack, { toolset, script: BUSY_SCRIPT, input: { tag } })));
  for (const [i, id] of ids.entries()) {
    const done = await waitForRun(stack, id, 120_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toBe(`${tags[i]}:${BUSY_SUM}`);
  }
  return ids;
}

// Tests of the session queues themselves, with the speculative steps and eager calls they serve.
describe.skipIf(!acceleratorsOn("session-queues", "speculative-steps", "eager-calls"))(
  "calls follow the run's session",
  () => {
    it("hands the calls made together straight back to the worker holding the isolate, so no result discards its steps", async () => {
      const first = await startWorker("eager-a", {});
      const second = await startWorker("eager-b", {});
      const ids = await runBusyScripts(["a", "b", "c", "d"]);
      for (const id of ids) {
        const events = await historyOf(id);
        const holders = new Set(
          events.flatMap((e) =>
            e.workflowTaskCompletedEventAttributes ? [e.workflowTaskCompletedEventAttributes.identity] : [],
          ),
        );
        // Sticky: one worker took every workflow task of the run, and with them its steps.
        expect(holders.size, id).toBe(1);
        const placements = callPlacements(events);
        expect(placements).toHaveLength(92);
        for (const { queue, startedBy } of placements) {
          expect(queue, id).toBe(stack.config.temporal.taskQueue);
          expect(startedBy, id).toBe([...holders][0]);
        }
      }
      // Each run's first step is its one cold step; every later one was warm where its isolate was.
      expect(first.steps.cold + second.steps.cold).toBe(ids.length);
      await workers.shutdownStarted();
    }, 240_000);

    it("sends the calls made together to the worker holding the isolate once a result came from the other worker", async () => {
      const first = await startWorker("session-a");
      const second = await startWorker("session-b");
      const owners = new Map([
        [first.worker.sessionQueue, "session-a"],
        [second.worker.sessionQueue, "session-b"],
      ]);
      const ids = await runBusyScripts(["a", "b", "c", "d", "e", "f"]);
      let routed = 0;
      for (const id of ids) {
        const placements = callPlacements(await historyOf(id));
        expect(placements).toHaveLength(92);
        // A call on a session queue was started by the worker whose queue it is.
        for (const { queue, startedBy } of placements) {
          if (queue === stack.config.temporal.taskQueue) continue;
          expect(owners.has(queue), `${id}: ${queue}`).toBe(true);
          expect(startedBy, `${id}: ${queue}`).toBe(owners.get(queue));
          routed += 1;
        }
        // Calls made alone (30, then 2 × 16 together, then 30) stay on the shared queue.
        for (const { queue } of [...placements.slice(0, 30), ...placements.slice(62)])
          expect(queue, id).toBe(stack.config.temporal.taskQueue);
      }
      expect(routed).toBeGreaterThan(0);
      // Without the session queue, every result of a call made together that another worker
      // finished could discard the holder's speculative steps; with it, only those before the run
      // learnt of the other worker can.
      expect(first.steps.cold + second.steps.cold).toBeLessThanOrEqual(3 * ids.length);
      expect(first.steps.warm + second.steps.warm).toBeGreaterThan(0);
    }, 240_000);

    it("sends a call to the shared queue when the worker holding the isolate was killed, and the run completes", async () => {
      // Two worker processes from the start, and six calls at a time (Temporal hands three of them,
      // as many as REWIND_EAGER_CALLS allows, straight to the worker completing the workflow task, the
      // others to either worker), so the run
      // learns of the other worker; the one holding the isolate is then killed while calls made
      // together wait on its session queue.
      await workers.shutdownStarted();
      const env = {
        REWIND_EAGER_CALLS: "3",
        TEMPORAL_ADDRESS: stack.address,
        REWIND_TASK_QUEUE: stack.config.temporal.taskQueue,
        REWIND_STATE_DIR: stack.config.stateDir,
      };
      const pair = [await spawnWorker(env), await spawnWorker(env)];
      processes.push(...pair);
      const id = await startRun(stack, {
        toolset,
        script: `import { svc } from "rewind:tools";
export default async function main() {
  let sum = 0;
  for (let i = 0; i < 60; i += 6) {
    const six = (await Promise.all(Array.from({ length: 6 }, (_, k) => svc.slow({ i: i + k })))) as { i: number }[];
    for (const { i: n } of six) sum += n;
  }
  return sum;
}`,
      });
      const routed = await waitFor(
        "a call made together on a session queue",
        async () => callPlacements(await historyOf(id)).find(({ queue }) => queue.includes("-session-")),
        { intervalMs: 50, timeoutMs: 60_000, until: (found) => found !== undefined },
      );
      const history = await historyOf(id);
      const holder = [...history].reverse().find((e) => e.workflowTaskStartedEventAttributes)
        ?.workflowTaskStartedEventAttributes?.identity;
      const doomed = pair.find((p) => holder?.startsWith(`${p.child.pid}@`));
      expect(doomed, `the worker ${holder ?? "?"} is one of ours`).toBeDefined();
      expect((await stack.client.workflow.getHandle(id).describe()).status.name).toBe("RUNNING");
      await doomed?.kill("SIGKILL");
      const survivor = pair.find((p) => p !== doomed);
      const done = await waitForRun(stack, id, 150_000);
      expect(done.status, JSON.stringify(done.error)).toBe("completed");
      expect(done.result).toBe(1770);
      const events = await historyOf(id);
      // A call waited on the killed worker's queue, was never started there, and went to the shared queue.
      const neverStarted = events.filter(
        (e) =>
          e.activityTaskTimedOutEventAttributes?.failure?.timeoutFailureInfo?.timeoutType ===
          temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START,
      );
      expect(neverStarted.length).toBeGreaterThan(0);
      expect(routed?.queue).toMatch(/-session-/);
      // The calls made together at the end followed the survivor, which took the run's steps.
      const last = callPlacements(events).at(-1);
      expect(last?.queue).toMatch(/-session-/);
      expect(last?.startedBy?.startsWith(`${survivor?.child.pid}@`)).toBe(true);
    }, 180_000);
  },
);
