/**
 * A harness that already has a Temporal connection (its own worker's) hands it to
 * createHostToolWorker: the host tools are served over it, and shutting the host-tool worker down
 * leaves it open for the harness, which owns it.
 */
import { randomUUID } from "node:crypto";
import { NativeConnection } from "@temporalio/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHostToolWorker } from "../../src/sdk/index.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";

let stack: RewindStack;
let connection: NativeConnection;

beforeAll(async () => {
  stack = await startRewindStack();
  connection = await NativeConnection.connect({ address: stack.address });
});
afterAll(async () => {
  await connection?.close();
  await stack?.stop();
});

describe("createHostToolWorker with the harness's own connection", () => {
  it("serves calls over it and leaves it open at shutdown", async () => {
    const taskQueue = `harness-${randomUUID()}`;
    const host = await createHostToolWorker({
      connection,
      namespace: stack.config.temporal.namespace,
      address: "127.0.0.1:1", // not used: the connection is
      taskQueue,
      tools: { "harness.echo": async (args) => ({ echoed: args["text"] }) },
    });
    const serving = host.run();
    const toolset = await registerToolset(stack, {
      hostTools: {
        harness: {
          taskQueue,
          tools: { echo: { inputSchema: { type: "object", properties: { text: { type: "string" } } } } },
        },
      },
    });
    const id = await startRun(stack, {
      toolset,
      script: `import { harness } from "rewind:tools";\nexport default () => harness.echo({ text: "over the harness's connection" });`,
    });
    expect((await waitForRun(stack, id)).result).toEqual({ echoed: "over the harness's connection" });
    await host.shutdown();
    await serving;
    // Still the harness's: it answers after the host-tool worker is gone.
    const info = await connection.workflowService.getSystemInfo({});
    expect(info.capabilities).toBeDefined();
  });
});
