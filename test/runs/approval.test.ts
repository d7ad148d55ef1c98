/**
 * The approval policy: a call that needs approval is parked before it is sent, shown on the
 * run, and decided exactly once (approve sends it, reject gives the script ToolError(rejected));
 * a parked run survives the loss of its worker.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { IDEMPOTENCY_KEY, effectCounterTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { expectRunGoing } from "../helpers/run-going.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { spawnWorker } from "../helpers/worker-process.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
let server: TestMcpServer;
let toolset: string;
const effects = effectCounterTool({ name: "send_invoice" });

beforeAll(async () => {
  stack = await startRewindStack({ noWorker: true });
  server = await startMcpServer({ tools: [effects.tool] });
  toolset = await registerToolset(stack, {
    mcpServers: { billing: { url: server.url } },
    policies: { "billing.send_invoice": { approval: true } },
  });
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

const SCRIPT = `import { billing, ToolError } from "rewind:tools";
export default async function main(input: { amount: number }) {
  try {
    await billing.send_invoice({ label: "invoice " + input.amount });
    return "sent";
  } catch (e) {
    return e instanceof ToolError ? [e.code, e.message] : String(e);
  }
}`;

function waitParked(id: string) {
  return waitFor(`run ${id} to park a call`, async () => (await stack.request("GET", `/v1/runs/${id}`)).body, {
    timeoutMs: 20_000,
    until: (body) => body.status === "parked" && Array.isArray(body["parked"]) && body["parked"].length > 0,
  });
}

const workerEnv = () => ({
  TEMPORAL_ADDRESS: stack.address,
  REWIND_TASK_QUEUE: stack.config.temporal.taskQueue,
  REWIND_STATE_DIR: stack.config.stateDir,
});

describe("approval", () => {
  it("parks the call before sending it, sends it once approved, and refuses a second decision", async () => {
    const worker = await spawnWorker(workerEnv());
    try {
      const id = await startRun(stack, { toolset, script: SCRIPT, input: { amount: 12 } });
      const parked = await waitParked(id);
      expect(parked["parked"]).toEqual([
        { seq: 1, tool: "billing.send_invoice", args: { label: "invoice 12" }, reason: "approval", details: {} },
      ]);
      expect(server.calls.filter((c) => c.name === "send_invoice")).toHaveLength(0);
      expect((await stack.request("POST", `/v1/runs/${id}/calls/2/approve`)).status).toBe(409);
      expect((await stack.request("POST", `/v1/runs/${id}/calls/1/approve`)).status).toBe(200);
      expect((await stack.request("POST", `/v1/runs/${id}/calls/1/approve`)).status).toBe(409);
      expect((await stack.request("POST", `/v1/runs/${id}/calls/1/reject`, { reason: "too late" })).status).toBe(409);
      const done = await waitForRun(stack, id);
      expect(done.result).toBe("sent");
      expect(server.calls.filter((c) => c.name === "send_invoice")).toHaveLength(1);
      expect((await stack.request("POST", `/v1/runs/${id}/calls/1/approve`)).status).toBe(409);
    } finally {
      await worker.kill("SIGTERM");
    }
  }, 60_000);

  it("gives the script ToolError(rejected) with the reason when rejected, and sends nothing", async () => {
    const worker = await spawnWorker(workerEnv());
    try {
      const before = server.calls.length;
      const id = await startRun(stack, { toolset, script: SCRIPT, input: { amount: 99 } });
      await waitParked(id);
      expect((await stack.request("POST", `/v1/runs/${id}/calls/1/reject`, { reason: "amount too high" })).status).toBe(
        200,
      );
      const done = await waitForRun(stack, id);
      expect(done.result).toEqual(["rejected", "billing.send_invoice: amount too high"]);
      expect(server.calls.length).toBe(before);
      expect((await stack.request("POST", `/v1/runs/${id}/calls/abc/approve`)).status).toBe(404);
      expect((await stack.request("POST", `/v1/runs/${id}/calls/1/reject`, { reason: 5 })).status).toBe(400);
    } finally {
      await worker.kill("SIGTERM");
    }
  }, 60_000);

  it("keeps a call parked across the loss of the worker", async () => {
    const first = await spawnWorker(workerEnv());
    const id = await startRun(stack, { toolset, script: SCRIPT, input: { amount: 7 } });
    await waitParked(id);
    // The kill must come while the call is parked and unsent.
    await expectRunGoing(stack.client, id, { calls: 1 });
    expect(
      server.calls.filter((c) => c.name === "send_invoice" && String(c.meta[IDEMPOTENCY_KEY]).startsWith(`${id}/`)),
    ).toHaveLength(0);
    await first.kill("SIGKILL");
    const second = await spawnWorker(workerEnv());
    try {
      expect((await stack.request("POST", `/v1/runs/${id}/calls/1/approve`)).status).toBe(200);
      const done = await waitForRun(stack, id, 60_000);
      expect(done.result).toBe("sent");
    } finally {
      await second.kill("SIGTERM");
    }
  }, 90_000);
});
