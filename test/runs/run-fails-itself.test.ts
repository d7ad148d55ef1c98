/**
 * A run that fails on an error of its own, not its script's (here: every step's local activity
 * fails, as a broken sandbox would), still ends the one way every run ends: `RewindStatus` says
 * failed and the current details say why, where it used to stay `running`. The fault is injected
 * in the worker's activities; the workflows and the server are the real ones. It is announced like
 * a script's failure, with run.failed, and fails typed RunBroken with the error it met as its message.
 */
import path from "node:path";
import { ApplicationFailure } from "@temporalio/common";
import { NativeConnection, Worker } from "@temporalio/worker";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { DeliverEventInput } from "../../src/shared/events.ts";
import { SEARCH_ATTRIBUTES } from "../../src/shared/run.ts";
import { loadWorkflowBundle } from "../../src/worker/workflow-bundle.ts";
import { REPLAY_SINKS } from "../../src/worker/replay-sinks.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
let connection: NativeConnection;
let worker: Worker;
let running: Promise<void>;
/** The events the run emitted, as the worker was asked to deliver them. */
const delivered: DeliverEventInput[] = [];

beforeAll(async () => {
  stack = await startRewindStack({ noWorker: true });
  connection = await NativeConnection.connect({ address: stack.address });
  worker = await Worker.create({
    connection,
    namespace: stack.config.temporal.namespace,
    taskQueue: stack.config.temporal.taskQueue,
    workflowBundle: await loadWorkflowBundle(path.join(stack.config.stateDir, "cache")),
    activities: {
      advanceScript: () =>
        Promise.reject(ApplicationFailure.nonRetryable("the sandbox is out of order", "SandboxBroken")),
      deliverEvent: (input: DeliverEventInput) => {
        delivered.push(input);
        return Promise.resolve({ delivered: true });
      },
    },
    // Every sink the run workflow calls, none doing anything: one it names and this worker lacks is logged at each activation.
    sinks: REPLAY_SINKS,
  });
  running = worker.run();
});
afterAll(async () => {
  worker?.shutdown();
  await running;
  await connection?.close();
  await stack?.stop();
});

it("sets RewindStatus to failed and says why when the run fails on an error of its own", async () => {
  const id = await startRun(stack, { script: "export default async () => 1;" });
  const done = await waitForRun(stack, id);
  expect(done.status).toBe("failed");
  expect(done.error).toMatchObject({ type: "RunBroken", message: "the sandbox is out of order" });
  const handle = stack.client.workflow.getHandle(id);
  expect((await handle.describe()).typedSearchAttributes.get(SEARCH_ATTRIBUTES.status)).toBe("failed");
  const metadata = await handle.query<{ currentDetails?: string }>("__temporal_workflow_metadata");
  expect(metadata.currentDetails).toBe("failed: the sandbox is out of order");
  await waitFor(`an event for ${id}`, () => delivered.some((d) => d.event.runId === id), { timeoutMs: 10_000 });
  expect(delivered.filter((d) => d.event.runId === id).map((d) => [d.event.type, d.event.data])).toEqual([
    ["run.failed", { error: { type: "RunBroken", message: "the sandbox is out of order" } }],
  ]);
});
