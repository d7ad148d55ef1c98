/**
 * Decisions on unknown outcomes: an `at_most_once` call under `onUnknown: "park"` whose attempt
 * ends without an answer parks instead of failing, and the harness resolves it with a result
 * (checked against the tool's output schema), sends it again with the same key, or fails it;
 * the journal records who decided and how. The parked call survives the loss of its worker.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { IDEMPOTENCY_KEY, chargeOnRetryTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";
import { expectRunGoing } from "../helpers/run-going.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { spawnStackWorker, type WorkerProcess } from "../helpers/worker-process.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
let server: TestMcpServer;
let toolset: string;
let worker: WorkerProcess;

beforeAll(async () => {
  stack = await startRewindStack({ noWorker: true });
  server = await startMcpServer({
    tools: [chargeOnRetryTool("charge"), chargeOnRetryTool("charge_plain"), chargeOnRetryTool("refund")],
  });
  toolset = await registerToolset(stack, {
    mcpServers: { pay: { url: server.url } },
    policies: {
      "pay.charge": { onInterruption: "at_most_once", onUnknown: "park" },
      "pay.charge_plain": { onInterruption: "at_most_once" },
      "pay.refund": { approval: true },
    },
  });
  worker = await spawnStackWorker(stack);
}, 90_000);
afterAll(async () => {
  await worker?.kill("SIGTERM");
  await stack?.stop();
  await server?.close();
});

const script = (tool: string) => `import { pay, ToolError } from "rewind:tools";
export default async function main() {
  try {
    return ["ok", await pay.${tool}({ amount: 5 })];
  } catch (e) {
    return e instanceof ToolError ? [e.code, e.message] : ["other", String(e)];
  }
}`;

/** Calls of `tool` the server received for the run's call 1, by its idempotency key. */
const sent = (id: string, tool = "charge") =>
  server.calls.filter((c) => c.name === tool && c.meta[IDEMPOTENCY_KEY] === `${id}/1`).length;

async function parkedRun(): Promise<string> {
  const id = await startRun(stack, { toolset, script: script("charge") });
  await waitFor(
    `run ${id} to park on its unknown outcome`,
    async () => (await stack.request("GET", `/v1/runs/${id}`)).body,
    {
      timeoutMs: 30_000,
      until: (body: ApiBody) => body.status === "parked",
    },
  );
  return id;
}

async function journalEntry(id: string): Promise<Record<string, unknown>> {
  const { body } = await stack.request("GET", `/v1/runs/${id}/journal`);
  return (body["entries"] as Record<string, unknown>[])[0] ?? {};
}

describe("onUnknown: park", () => {
  it("parks the call, refuses what does not fit, and resolves it with a result the script gets, unsent", async () => {
    const id = await parkedRun();
    const run = await stack.request("GET", `/v1/runs/${id}`);
    expect(run.body["parked"]).toEqual([
      {
        seq: 1,
        tool: "pay.charge",
        args: { amount: 5 },
        reason: "outcomeUnknown",
        details: { message: expect.stringMatching(/may or may not have taken effect/) },
      },
    ]);
    expect(sent(id)).toBe(1);
    expect((await journalEntry(id))["status"]).toBe("parked");

    const calls = `/v1/runs/${id}/calls`;
    expect((await stack.request("POST", `${calls}/1/approve`)).status).toBe(409);
    expect((await stack.request("POST", `${calls}/1/reject`)).status).toBe(409);
    expect((await stack.request("POST", `${calls}/7/resolve`, { result: { charged: true } })).status).toBe(404);
    expect((await stack.request("POST", `/v1/runs/run_0000000000nope/calls/1/retry`)).status).toBe(404);
    const missing = await stack.request("POST", `${calls}/1/resolve`, {});
    expect(missing.status).toBe(400);
    expect(missing.body.error?.message).toMatch(/body\.result|result:/);
    const misfit = await stack.request("POST", `${calls}/1/resolve`, { result: { charged: "yes" } });
    expect(misfit.status).toBe(422);
    expect(misfit.body.error?.code).toBe("invalidAnswer");
    expect(misfit.body.error?.message).toMatch(/output schema of pay\.charge: result\/charged must be boolean/);

    const resolved = await stack.request("POST", `${calls}/1/resolve`, { result: { charged: true }, by: "ops" });
    expect(resolved.status, JSON.stringify(resolved.body)).toBe(200);
    expect(resolved.body["decidedBy"]).toMatchObject({ by: "ops", decision: "resolved" });
    const done = await waitForRun(stack, id, 30_000);
    expect(done.result).toEqual(["ok", { charged: true }]);
    expect(sent(id)).toBe(1);
    expect(await journalEntry(id)).toMatchObject({
      status: "completed",
      result: { charged: true },
      attempts: 1,
      decidedBy: { by: "ops", decision: "resolved" },
    });
    expect((await stack.request("POST", `${calls}/1/resolve`, { result: { charged: true } })).status).toBe(409);
  }, 90_000);

  it("retry sends the call again with the same key, one attempt more", async () => {
    const id = await parkedRun();
    expect((await stack.request("POST", `/v1/runs/${id}/calls/1/retry`, { by: "ops" })).status).toBe(200);
    const done = await waitForRun(stack, id, 30_000);
    expect(done.result).toEqual(["ok", { charged: true, attempt: 2 }]);
    expect(sent(id)).toBe(2);
    expect(await journalEntry(id)).toMatchObject({
      status: "completed",
      attempts: 2,
      decidedBy: { by: "ops", decision: "retried" },
    });
  }, 90_000);

  it("fail gives the script ToolError(outcomeUnknown) with the reason, and sends nothing more", async () => {
    const id = await parkedRun();
    const failed = await stack.request("POST", `/v1/runs/${id}/calls/1/fail`, { reason: "the ledger has no charge" });
    expect(failed.status).toBe(200);
    const done = await waitForRun(stack, id, 30_000);
    expect(done.result).toEqual([
      "outcomeUnknown",
      expect.stringMatching(/may or may not have taken effect.*failed by the harness: the ledger has no charge/),
    ]);
    expect(sent(id)).toBe(1);
    expect(await journalEntry(id)).toMatchObject({ status: "failed", decidedBy: { decision: "failed" } });
  }, 90_000);

  it("fails at once without the policy, and refuses resolve on a call parked for approval", async () => {
    const plain = await startRun(stack, { toolset, script: script("charge_plain") });
    expect((await waitForRun(stack, plain, 30_000)).result).toEqual([
      "outcomeUnknown",
      expect.stringMatching(/may or may not have taken effect/),
    ]);
    const id = await startRun(stack, { toolset, script: script("refund") });
    await waitFor(`run ${id} to park for approval`, async () => (await stack.request("GET", `/v1/runs/${id}`)).body, {
      timeoutMs: 30_000,
      until: (body: ApiBody) => body.status === "parked",
    });
    const refused = await stack.request("POST", `/v1/runs/${id}/calls/1/resolve`, { result: { charged: true } });
    expect(refused.status).toBe(409);
    expect(refused.body.error?.message).toMatch(/not parked on an unknown outcome \(it waits for approval\)/);
    expect((await stack.request("POST", `/v1/runs/${id}/calls/1/fail`)).status).toBe(409);
    expect((await stack.request("POST", `/v1/runs/${id}/cancel`)).status).toBe(200);
  }, 90_000);

  it("keeps the call parked across the loss of its worker", async () => {
    const id = await parkedRun();
    await expectRunGoing(stack.client, id, { calls: 1 });
    await worker.kill("SIGKILL");
    worker = await spawnStackWorker(stack);
    // The new worker answers the run's queries once it has taken the run over (a 503 until then).
    await waitFor(`run ${id}'s new worker to answer`, async () => (await stack.request("GET", `/v1/runs/${id}`)).body, {
      timeoutMs: 60_000,
      until: (body: ApiBody) => Array.isArray(body["parked"]),
    });
    expect((await stack.request("POST", `/v1/runs/${id}/calls/1/retry`)).status).toBe(200);
    const done = await waitForRun(stack, id, 60_000);
    expect(done.result).toEqual(["ok", { charged: true, attempt: 2 }]);
    expect(sent(id)).toBe(2);
  }, 120_000);
});

describe("registering onUnknown", () => {
  it("refuses it on a tool not sent at most once, and takes it on fetch left to its per-method rule", async () => {
    const refused = await stack.request("POST", "/v1/toolsets", {
      mcpServers: { pay: { url: server.url } },
      policies: { "pay.charge": { onUnknown: "park" } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error?.message).toMatch(
      /policies\["pay\.charge"\]\.onUnknown: only a call sent at most once can end with an unknown outcome/,
    );
    const wrongValue = await stack.request("POST", "/v1/toolsets", {
      mcpServers: { pay: { url: server.url } },
      policies: { "pay.charge": { onInterruption: "at_most_once", onUnknown: "wait" } },
    });
    expect(wrongValue.status).toBe(400);
    const http = await stack.request("POST", "/v1/toolsets", {
      http: { allowedHosts: ["api.example.com"] },
      policies: { "http.fetch": { onUnknown: "park" } },
    });
    expect(http.status, JSON.stringify(http.body)).toBe(201);
    expect((http.body["document"] as { policies: unknown }).policies).toEqual({ "http.fetch": { onUnknown: "park" } });
  });
});
