/**
 * A cancelled run tells the harness: `run.cancelled` arrives, signed and fitting its documented
 * schema, whether the run was asleep, had a call parked for approval or a call in flight, naming
 * the run's toolset and end user and the calls the cancellation left unfinished (so a harness
 * can close the approval it was showing).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEventReceiver, type EventReceiver } from "../helpers/event-receiver.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { effectCounterTool, slowTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

const key = `cancelled-key-${randomUUID()}`;
const auth = { authorization: `Bearer ${key}` };
const effects = effectCounterTool({ name: "pay" });
const slow = slowTool({ name: "sync", delayMs: 60_000 });
let stack: RewindStack;
let server: TestMcpServer;
let receiver: EventReceiver;
let toolset: string;

const request = (method: string, route: string, body?: unknown) => stack.request(method, route, body, auth);
type JournalEntryStatus = { tool: string; status: string };

beforeAll(async () => {
  [stack, server, receiver] = await Promise.all([
    startRewindStack({ env: { REWIND_API_KEYS: `${key}:cancelled-${randomUUID().slice(0, 8)}` } }),
    startMcpServer({ tools: [effects.tool, slow.tool] }),
    startEventReceiver(),
  ]);
  receiver.setSecret(String((await request("PUT", "/v1/events/endpoint", { url: receiver.url })).body["secret"]));
  const registered = await request("POST", "/v1/toolsets", {
    mcpServers: { bank: { url: server.url } },
    policies: { "bank.pay": { approval: true } },
  });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  toolset = String(registered.body.id);
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
  await receiver?.close();
});

async function start(script: string, endUser?: string): Promise<string> {
  const { status, body } = await request("POST", "/v1/runs", { toolset, script, ...(endUser ? { endUser } : {}) });
  expect(status, JSON.stringify(body)).toBe(201);
  return String(body.id);
}

/** Waits until the run's journal shows `tool` with `status`: the run is where the test wants it. */
async function waitForCall(id: string, tool: string, status: string): Promise<void> {
  await waitFor(
    `run ${id} to have ${tool} ${status}`,
    async () => ((await request("GET", `/v1/runs/${id}/journal`)).body["entries"] ?? []) as JournalEntryStatus[],
    { until: (entries) => entries.some((e) => e.tool === tool && e.status === status) },
  );
}

async function cancel(id: string): Promise<void> {
  expect((await request("POST", `/v1/runs/${id}/cancel`)).status).toBe(200);
  expect((await waitForRun(stack, id, 30_000, auth)).status).toBe("cancelled");
}

describe("run.cancelled", () => {
  it("arrives when a run is cancelled while it sleeps, with its toolset and end user", async () => {
    const id = await start(
      'import { sleep } from "rewind:tools";\nexport default async () => { await sleep("1h"); return 1; };',
      "ada",
    );
    await waitForCall(id, "rewind.sleep", "running");
    await cancel(id);
    const event = await receiver.waitFor(id, "run.cancelled", 15_000);
    expect(event).toMatchObject({ type: "run.cancelled", runId: id, toolset, endUser: "ada" });
    expect(event.data).toEqual({ unfinished: [{ seq: 1, tool: "rewind.sleep", status: "running" }] });
  });

  it("arrives when a run is cancelled with a call parked for approval, which is never sent", async () => {
    const id = await start(
      'import { bank } from "rewind:tools";\nexport default async () => { await bank.pay({ label: "rent" }); return 1; };',
    );
    await receiver.waitFor(id, "call.approval_requested", 15_000);
    expect((await request("GET", `/v1/runs/${id}`)).body.status).toBe("parked");
    await cancel(id);
    const event = await receiver.waitFor(id, "run.cancelled", 15_000);
    expect(event).toMatchObject({ type: "run.cancelled", runId: id, toolset, endUser: null });
    expect(event.data).toEqual({ unfinished: [{ seq: 1, tool: "bank.pay", status: "parked" }] });
    expect(effects.state.total).toBe(0);
    expect(receiver.events.filter((e) => e.runId === id).map((e) => e.type)).toEqual([
      "call.approval_requested",
      "run.cancelled",
    ]);
  });

  it("arrives when a run is cancelled with a call in flight, and the call is cancelled at its server", async () => {
    const id = await start(
      'import { bank } from "rewind:tools";\nexport default async () => { await bank.sync({}); return 1; };',
      "grace",
    );
    await waitForCall(id, "bank.sync", "running");
    await waitFor("the call to be in flight at its server", () => slow.state.inFlight > 0, { intervalMs: 50 });
    expect(slow.state.inFlight).toBe(1);
    await cancel(id);
    const event = await receiver.waitFor(id, "run.cancelled", 15_000);
    expect(event).toMatchObject({ type: "run.cancelled", runId: id, toolset, endUser: "grace" });
    expect(event.data).toEqual({ unfinished: [{ seq: 1, tool: "bank.sync", status: "running" }] });
    await waitFor("the server to be told of the cancel", () => slow.state.cancelled > 0, { timeoutMs: 15_000 });
    expect(slow.state.cancelled).toBe(1);
  });

  it("sends nothing the document does not describe", () => {
    expect(receiver.misfits).toEqual([]);
  });
});
