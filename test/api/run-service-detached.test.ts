/**
 * The run service's methods are plain functions: the routes call them on `deps.runs`, but a
 * method passed on alone works the same. `cancel` and `rollback` answer the run's view through
 * `get`, and once called it as `this.get`, which a detached method has no `this` for. Against the
 * test run's Temporal server and a real run that waits for a signal.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_NAMESPACE } from "../../src/api/auth.ts";
import { createRunService, type RunService } from "../../src/api/index.ts";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";
import { startRun } from "../helpers/toolset.ts";

const WAITS = `import { waitForSignal } from "rewind:tools";
export default async function main() { return await waitForSignal("go"); }`;

let stack: RewindStack;
let runs: RunService;

beforeAll(async () => {
  stack = await startRewindStack();
  runs = createRunService({ client: stack.client, taskQueue: stack.config.temporal.taskQueue, uiUrl: undefined });
});
afterAll(async () => {
  await stack?.stop();
});

describe("the run service's methods, passed on alone", () => {
  it("get reads a run, and answers 404 for another namespace's", async () => {
    const { get } = runs;
    const id = await startRun(stack, { script: WAITS });
    expect(await get(id, DEFAULT_NAMESPACE)).toMatchObject({ id, status: "running" });
    await expect(get(id, "someone-else")).rejects.toMatchObject({ status: 404 });
    await runs.cancel(id, DEFAULT_NAMESPACE);
  });

  it("rollback asks the run to roll back and answers its view", async () => {
    const { rollback } = runs;
    const id = await startRun(stack, { script: WAITS });
    const view = await rollback(id, DEFAULT_NAMESPACE, { principal: "tester" });
    expect(view.id).toBe(id);
    await expect(rollback(id, DEFAULT_NAMESPACE, { principal: "tester" })).rejects.toMatchObject({ status: 409 });
  });

  it("cancel cancels a running run and answers its view", async () => {
    const { cancel } = runs;
    const id = await startRun(stack, { script: WAITS });
    expect((await cancel(id, DEFAULT_NAMESPACE)).id).toBe(id);
    await expect(stack.client.workflow.getHandle(id).result()).rejects.toThrow(/cancel/i);
  });
});
