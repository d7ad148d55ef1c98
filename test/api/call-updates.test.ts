/**
 * How the API answers when Temporal does not take an update at once. Temporal refuses an update
 * whose workflow task failed with FAILED_PRECONDITION, and the task is retried: the update is
 * sent again for a while, and a run still running after that is a 503 that says to try again,
 * never a 500. A run that ended meanwhile is a 409. The refusals are made by the test's `send`
 * (a failed workflow task can't be staged on demand); the runs and their descriptions are real.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendCallUpdate } from "../../src/api/call-updates.ts";
import { HttpError } from "../../src/api/http-error.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { startRun } from "../helpers/toolset.ts";

const WAITS = `import { waitForSignal } from "rewind:tools";
export default async function main() { return await waitForSignal("go"); }`;

/** The error the client raises for an update refused because the run's workflow task failed. */
const failedPrecondition = (): Error =>
  Object.assign(new Error("9 FAILED_PRECONDITION: workflow task failed"), { code: 9 });

let stack: RewindStack;
beforeAll(async () => {
  stack = await startRewindStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe("an update Temporal does not take at once", () => {
  it("is sent again until the run takes it", async () => {
    const id = await startRun(stack, { script: WAITS });
    let sends = 0;
    const answer = await sendCallUpdate(
      stack.client,
      id,
      async () => {
        sends += 1;
        if (sends < 3) throw failedPrecondition();
        return "taken";
      },
      "refused",
    );
    expect(answer).toBe("taken");
    expect(sends).toBe(3);
    await stack.client.workflow.getHandle(id).cancel();
  });

  it("is a 503 that says to try again when a running run never takes it", async () => {
    const id = await startRun(stack, { script: WAITS });
    let sends = 0;
    const refusedFor = sendCallUpdate(
      stack.client,
      id,
      async () => {
        sends += 1;
        throw failedPrecondition();
      },
      "refused",
      500,
    );
    await expect(refusedFor).rejects.toBeInstanceOf(HttpError);
    await expect(refusedFor).rejects.toMatchObject({ status: 503, code: "unavailable" });
    expect(sends).toBeGreaterThan(1);
    await stack.client.workflow.getHandle(id).cancel();
  });

  it("is a 409 when the run ended meanwhile", async () => {
    const id = await startRun(stack, { script: WAITS });
    await stack.client.workflow.getHandle(id).cancel();
    await waitForRun(stack, id);
    const refusedFor = sendCallUpdate(
      stack.client,
      id,
      async () => Promise.reject(failedPrecondition()),
      "refused",
      300,
    );
    await expect(refusedFor).rejects.toMatchObject({ status: 409, code: "conflict" });
  });
});
