/**
 * A sandbox step a worker refuses is not the run's failure: the workflow task fails, Temporal
 * retries it, and the run stays running until a worker that can take the step does.
 * - A machine too busy to give a step its CPU time: a worker whose sandbox has a tiny wall-time
 *   backstop acts as one that never gives it. A worker with CPU to give then reaches the
 *   script's own verdict.
 * - A run of a newer sandbox runtime than the worker's (a run of a newer release, on an older
 *   worker).
 */
import { defaultPayloadConverter } from "@temporalio/common";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { testWorkers } from "../helpers/test-worker.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { createSandbox } from "../../src/sandbox/index.ts";
import { validateAgainstSchema } from "../../src/schemas/index.ts";
import { RUN_WORKFLOW_TYPE, type RunInput } from "../../src/shared/run.ts";
import { SANDBOX_RUNTIME_VERSION } from "../../src/shared/runtime-version.ts";

let stack: RewindStack;
const workers = testWorkers();

beforeAll(async () => {
  stack = await startRewindStack({ noWorker: true, env: { REWIND_SANDBOX_CPU_MS: "1500" } });
});
afterAll(async () => {
  await workers.stopAll();
  await stack?.stop();
});

/** The failure messages of the workflow tasks the run's history records as failed. */
async function workflowTaskFailures(id: string): Promise<string[]> {
  const history = await stack.client.workflow.getHandle(id).fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const message = event.workflowTaskFailedEventAttributes?.failure?.message;
    return message ? [message] : [];
  });
}

/** Waits for a workflow task of the run to fail with a message matching `pattern`; answers every such message. */
function taskFailureMatching(id: string, pattern: RegExp, what: string): Promise<string[]> {
  return waitFor(
    what,
    async () => {
      const messages = await workflowTaskFailures(id);
      return messages.some((message) => pattern.test(message)) ? messages : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

async function expectStillRunning(id: string): Promise<void> {
  expect((await stack.client.workflow.getHandle(id).describe()).status.name).toBe("RUNNING");
  expect((await stack.request("GET", `/v1/runs/${id}`)).body).toMatchObject({ status: "running" });
}

describe("a step a worker refuses", () => {
  it("keeps the run going while the machine is too busy to give a step its CPU time, and a worker with CPU to give reaches the script's verdict", async () => {
    const starved = createSandbox({
      memoryMb: 64,
      cpuMsPerStep: 1_500,
      warmSessions: 8,
      wallBackstop: { perCpuMs: 0, extraMs: 200 },
      validate: validateAgainstSchema,
    });
    await workers.start(stack, { sharedSandbox: starved, identity: "starved" }, () => starved.dispose());
    const started = await stack.request("POST", "/v1/runs", {
      script:
        'import { sleep } from "rewind:tools";\nexport default async function main() {\n  await sleep(1);\n  for (;;) {}\n}',
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const id = String(started.body.id);

    const failures = await taskFailureMatching(
      id,
      /machine is too busy/,
      "the run's workflow task to fail with MachineBusyError on the starved worker",
    );
    expect(failures.join("\n")).toMatch(/got \d+ ms of its 1500 ms of CPU time/);
    await expectStillRunning(id);

    await workers.shutdownStarted();
    await workers.start(stack, { identity: "roomy" });
    const ended = await waitForRun(stack, id, 90_000);
    expect(ended.status).toBe("failed");
    expect(ended.error?.type).toBe("LimitExceeded");
    expect(ended.error?.message).toMatch(/CPU time limit of 1500 ms/);
  }, 150_000);

  it("keeps a run of a newer sandbox runtime going on a worker that lacks it", async () => {
    if (workers.started.length === 0) await workers.start(stack, { identity: "roomy" });
    const template = await stack.request("POST", "/v1/runs", { script: "export default async () => 1;" });
    expect(template.status, JSON.stringify(template.body)).toBe(201);
    await waitForRun(stack, String(template.body.id));
    const history = await stack.client.workflow.getHandle(String(template.body.id)).fetchHistory();
    const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    if (!payload) throw new Error("the template run's history has no start input");
    // The same run as a release with a newer sandbox runtime would have started it.
    const { firstStep: _carried, ...input } = defaultPayloadConverter.fromPayload<RunInput>(payload);
    const newer: RunInput = { ...input, runId: `${input.runId}_newer`, runtimeVersion: SANDBOX_RUNTIME_VERSION + 1 };
    const handle = await stack.client.workflow.start(RUN_WORKFLOW_TYPE, {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId: newer.runId,
      args: [newer],
    });
    try {
      await taskFailureMatching(
        newer.runId,
        new RegExp(
          `started on sandbox runtime ${SANDBOX_RUNTIME_VERSION + 1}; this worker has runtime ${SANDBOX_RUNTIME_VERSION}`,
        ),
        "the newer run's workflow task to fail with RuntimeVersionError",
      );
      expect((await handle.describe()).status.name).toBe("RUNNING");
    } finally {
      await handle.terminate("the test is done with it");
    }
  }, 120_000);
});
