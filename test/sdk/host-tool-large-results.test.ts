/**
 * A host tool's large result: a harness's worker given the deployment's payload store keeps a
 * 3 MB result there (history holds a reference), and the script gets every byte.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHostToolWorker, type HostToolWorker } from "../../src/sdk/index.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";

let stack: RewindStack;
let host: HostToolWorker;
let hostRunning: Promise<void>;
const taskQueue = `harness-large-${randomUUID()}`;
const BIG = "abcdefghijklmnopqrstuvwxyz012345".repeat(100_000);

beforeAll(async () => {
  stack = await startRewindStack();
  host = await createHostToolWorker({
    address: stack.address,
    taskQueue,
    payloads: { store: stack.config.payloads.store },
    tools: { "harness.export": async () => ({ text: BIG }) },
  });
  hostRunning = host.run();
});
afterAll(async () => {
  await host?.shutdown();
  await hostRunning;
  await stack?.stop();
});

describe("host tools with large results", () => {
  it("keeps a 3 MB result in the payload store and hands the script every byte", async () => {
    const toolset = await registerToolset(stack, {
      hostTools: { harness: { taskQueue, tools: { export: { inputSchema: { type: "object" } } } } },
    });
    const id = await startRun(stack, {
      toolset,
      script:
        'import { harness } from "rewind:tools";\nexport default async () => { const { text } = (await harness.export({})) as { text: string }; return { length: text.length, tail: text.slice(-32) }; };',
    });
    const done = await waitForRun(stack, id, 60_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual({ length: BIG.length, tail: BIG.slice(-32) });
  }, 90_000);
});
