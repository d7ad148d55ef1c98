/**
 * The durability promises of a run: a worker SIGKILLed mid-run is replaced and the run
 * completes with the right result; a finished run's history replays without a
 * non-determinism error, including a script that reads the clock and Math.random.
 */
import { Worker } from "@temporalio/worker";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getStatusQuery } from "../../src/workflows/run/messages.ts";
import { loadWorkflowBundle } from "../../src/worker/workflow-bundle.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { expectRunGoing } from "../helpers/run-going.ts";
import { spawnWorker } from "../helpers/worker-process.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { REPLAY_SINKS } from "../../src/worker/index.ts";

let stack: RewindStack;
beforeAll(async () => {
  stack = await startRewindStack({ noWorker: true });
});
afterAll(async () => {
  await stack?.stop();
});

const workerEnv = () => ({
  TEMPORAL_ADDRESS: stack.address,
  REWIND_TASK_QUEUE: stack.config.temporal.taskQueue,
  REWIND_STATE_DIR: stack.config.stateDir,
  REWIND_LOG_LEVEL: "info",
});

const CLOCK_SCRIPT = [
  'import { sleep } from "rewind:tools";',
  "export default async function main(input: { n: number }) {",
  "  const rolls = [Math.random(), Math.random()];",
  "  const before = Date.now();",
  '  await sleep("3s");',
  "  await Promise.all([sleep(10), sleep(20)]);",
  "  rolls.push(Math.random());",
  "  return { n: input.n * 2, waited: Date.now() - before >= 3000, rolls: rolls.length, when: new Date().getTime() > 0 };",
  "}",
].join("\n");

describe("durability", () => {
  it("completes a run whose worker was SIGKILLed during a sleep", async () => {
    const first = await spawnWorker(workerEnv());
    const started = await stack.request("POST", "/v1/runs", { script: CLOCK_SCRIPT, input: { n: 21 } });
    expect(started.status).toBe(201);
    const id = String(started.body.id);
    const handle = stack.client.workflow.getHandle(id);
    // Wait until the script is inside its sleep: the first call is in flight.
    // (The query fails until the worker has taken the run's first task.)
    await waitFor("the run's first call to be in flight", async () => (await handle.query(getStatusQuery)).calls, {
      intervalMs: 50,
      retryErrors: true,
      until: (calls) => calls.inFlight > 0,
    });
    // The kill must come while the run is inside its sleep, not after it ended.
    expect((await handle.query(getStatusQuery)).calls.inFlight).toBeGreaterThan(0);
    await expectRunGoing(stack.client, id);
    await first.kill("SIGKILL");
    const second = await spawnWorker(workerEnv());
    try {
      const done = await waitForRun(stack, id, 60_000);
      expect(done.status, JSON.stringify(done.error)).toBe("completed");
      expect(done.result).toEqual({ n: 42, waited: true, rolls: 3, when: true });
    } finally {
      await second.kill("SIGTERM");
    }

    // The same history replays cleanly with the SDK's replayer.
    const history = await handle.fetchHistory();
    const bundle = await loadWorkflowBundle(path.join(stack.config.stateDir, "cache"));
    await expect(
      Worker.runReplayHistory({ workflowBundle: bundle, sinks: REPLAY_SINKS }, history, id),
    ).resolves.toBeUndefined();
  }, 120_000);
});
