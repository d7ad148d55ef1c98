/**
 * Approving the script itself: a run started with `approveScript` (or of a toolset with
 * `scriptApproval: "required"`) is parked before its first step until the harness approves its
 * script; a rejected script never runs — its first call, an effect, never reaches the server — and
 * the run fails with ScriptRejected. The wait survives the loss of its worker.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { IDEMPOTENCY_KEY, effectCounterTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset } from "../helpers/toolset.ts";
import { spawnStackWorker, type WorkerProcess } from "../helpers/worker-process.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
let server: TestMcpServer;
let toolset: string;
let guarded: string;
let worker: WorkerProcess;
const effects = effectCounterTool({ name: "send_invoice" });

beforeAll(async () => {
  stack = await startRewindStack({ noWorker: true });
  server = await startMcpServer({ tools: [effects.tool] });
  toolset = await registerToolset(stack, { mcpServers: { billing: { url: server.url } } });
  guarded = await registerToolset(stack, {
    mcpServers: { billing: { url: server.url } },
    scriptApproval: "required",
  });
  worker = await spawnStackWorker(stack);
}, 90_000);
afterAll(async () => {
  await worker?.kill("SIGTERM");
  await stack?.stop();
  await server?.close();
});

const SCRIPT = `import { billing } from "rewind:tools";
export default async function main() {
  await billing.send_invoice({ label: "invoice" });
  return "sent";
}`;

/** Calls the server received from the run (any seq). */
const sentBy = (id: string) => server.calls.filter((c) => String(c.meta[IDEMPOTENCY_KEY]).startsWith(`${id}/`)).length;

async function start(body: Record<string, unknown>): Promise<string> {
  const { status, body: answer } = await stack.request("POST", "/v1/runs", { script: SCRIPT, ...body });
  expect(status, JSON.stringify(answer)).toBe(201);
  return String(answer.id);
}

function waitWaiting(id: string, timeoutMs = 30_000): Promise<ApiBody> {
  return waitFor(
    `run ${id} to wait for its script's approval`,
    async () => (await stack.request("GET", `/v1/runs/${id}`)).body,
    {
      timeoutMs,
      until: (body: ApiBody) =>
        body.status === "parked" && (body["scriptApproval"] as { state?: string } | undefined)?.state === "waiting",
    },
  );
}

describe("script approval", () => {
  it("parks a run started with approveScript before its first step, and runs it once approved", async () => {
    const id = await start({ toolset, approveScript: true });
    const waiting = await waitWaiting(id);
    expect(waiting["parked"]).toEqual([]);
    expect(sentBy(id)).toBe(0);
    expect((await stack.request("POST", `/v1/runs/${id}/calls/1/approve`)).status).toBe(409);

    const approved = await stack.request("POST", `/v1/runs/${id}/approve`, { by: "reviewer" });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body["decidedBy"]).toMatchObject({ by: "reviewer", decision: "approved" });
    const done = await waitForRun(stack, id, 30_000);
    expect(done.status).toBe("completed");
    expect(done.result).toBe("sent");
    expect(sentBy(id)).toBe(1);
    const journal = await stack.request("GET", `/v1/runs/${id}/journal`);
    expect(journal.body["scriptApproval"]).toMatchObject({
      state: "approved",
      decidedBy: { by: "reviewer", decision: "approved" },
    });
    expect((await stack.request("POST", `/v1/runs/${id}/approve`)).status).toBe(409);
  }, 60_000);

  it("never runs a rejected script: the run fails with ScriptRejected and the server saw nothing", async () => {
    const id = await start({ toolset: guarded });
    await waitWaiting(id);
    const rejected = await stack.request("POST", `/v1/runs/${id}/reject`, { reason: "sends invoices", by: "ada" });
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    expect(rejected.body["decidedBy"]).toMatchObject({ by: "ada", decision: "rejected" });
    const done = await waitForRun(stack, id, 30_000);
    expect(done.status).toBe("failed");
    expect(done.error).toMatchObject({
      type: "ScriptRejected",
      message: "the harness rejected the script: sends invoices",
      details: { reason: "sends invoices", decidedBy: { by: "ada", decision: "rejected" } },
    });
    expect(sentBy(id)).toBe(0);
    const journal = await stack.request("GET", `/v1/runs/${id}/journal`);
    expect(journal.body["entries"]).toEqual([]);
    expect((await stack.request("POST", `/v1/runs/${id}/reject`)).status).toBe(409);
    expect((await stack.request("POST", `/v1/runs/${id}/approve`)).status).toBe(409);
  }, 60_000);

  it("refuses to approve a run that does not wait for it, and an unknown run", async () => {
    const id = await start({
      toolset,
      script: 'import { sleep } from "rewind:tools";\nexport default async () => { await sleep("1 minute"); };',
    });
    await waitFor(
      `run ${id} to take its first step`,
      async () => (await stack.request("GET", `/v1/runs/${id}/journal`)).body,
      {
        until: (body: ApiBody) => Array.isArray(body["entries"]) && body["entries"].length === 1,
      },
    );
    const refused = await stack.request("POST", `/v1/runs/${id}/approve`);
    expect(refused.status).toBe(409);
    expect(refused.body.error?.message).toMatch(/not waiting for its script's approval/);
    expect((await stack.request("POST", `/v1/runs/${id}/reject`, { reason: 7 })).status).toBe(400);
    expect((await stack.request("POST", "/v1/runs/run_0000000000nope/approve")).status).toBe(404);
    expect((await stack.request("POST", `/v1/runs/${id}/cancel`)).status).toBe(200);
  }, 60_000);

  it("keeps waiting across the loss of its worker", async () => {
    const id = await start({ toolset: guarded });
    await waitWaiting(id);
    await worker.kill("SIGKILL");
    worker = await spawnStackWorker(stack);
    expect(sentBy(id)).toBe(0);
    // The new worker answers for the run once it has taken it over; the run still waits.
    await waitWaiting(id, 60_000);
    expect((await stack.request("POST", `/v1/runs/${id}/approve`)).status).toBe(200);
    const done = await waitForRun(stack, id, 60_000);
    expect(done.result).toBe("sent");
    expect(sentBy(id)).toBe(1);
  }, 120_000);
});

describe("registering scriptApproval", () => {
  it("pins it, lets a derived toolset ask for it, and refuses another value", async () => {
    const { body } = await stack.request("GET", `/v1/toolsets/${guarded}`);
    expect((body["document"] as { scriptApproval?: string }).scriptApproval).toBe("required");
    const derived = await stack.request("POST", "/v1/toolsets", { base: toolset, scriptApproval: "required" });
    expect(derived.status, JSON.stringify(derived.body)).toBe(201);
    expect((derived.body["document"] as { scriptApproval?: string }).scriptApproval).toBe("required");
    const refused = await stack.request("POST", "/v1/toolsets", {
      mcpServers: { billing: { url: server.url } },
      scriptApproval: "sometimes",
    });
    expect(refused.status).toBe(400);
  });
});
