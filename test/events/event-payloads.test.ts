/**
 * Every event type a harness can receive, delivered by a real stack and checked against the
 * OpenAPI document's webhook for its type (the receiver refuses a misfit): each names the run's
 * toolset and end user at its top level, and its data says what the README says it does.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../../src/shared/events.ts";
import { billingTools, type BillingState } from "../helpers/billing-tools.ts";
import { startEventReceiver, type EventReceiver, type ReceivedEvent } from "../helpers/event-receiver.ts";
import { startMcpServer, type TestMcpServer, type TestToolDefinition } from "../helpers/mcp-test-server.ts";
import { droppingTool, echoTool, effectCounterTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

const key = `payloads-key-${randomUUID()}`;
const NAMESPACE = `payloads-${randomUUID().slice(0, 8)}`;
const auth = { authorization: `Bearer ${key}` };
const TOKEN = `Bearer payloads-${randomUUID()}`;
const PERSON = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
const OLD_SCHEMA = { type: "object", properties: { title: { type: "string" } }, required: ["title"] };
const NEW_SCHEMA = {
  type: "object",
  properties: { title: { type: "string" }, project: { type: "string" } },
  required: ["title", "project"],
};
const ticketTool = (inputSchema: Record<string, unknown>): TestToolDefinition => ({
  ...echoTool("create_ticket"),
  inputSchema,
});
const askTool: TestToolDefinition = {
  name: "ask_person",
  inputSchema: { type: "object" },
  handler: async (_args, extra) => ({
    content: [
      {
        type: "text",
        text: JSON.stringify(
          await extra.ask("elicitation/create", { message: "Who are you?", requestedSchema: PERSON }),
        ),
      },
    ],
  }),
};

let stack: RewindStack;
let receiver: EventReceiver;
let servers: {
  bank: TestMcpServer;
  guarded: TestMcpServer;
  asker: TestMcpServer;
  tickets: TestMcpServer;
  unsure: TestMcpServer;
  billing: TestMcpServer;
};
const toolsets: Record<"bank" | "guarded" | "asker" | "tickets" | "unsure" | "billing", string> = {
  bank: "",
  guarded: "",
  asker: "",
  tickets: "",
  unsure: "",
  billing: "",
};
let billing: { tools: TestToolDefinition[]; state: BillingState };
const seen: ReceivedEvent[] = [];

const request = (method: string, route: string, body?: unknown) => stack.request(method, route, body, auth);

async function register(name: keyof typeof toolsets, document: Record<string, unknown>): Promise<void> {
  const { status, body } = await request("POST", "/v1/toolsets", document);
  expect(status, JSON.stringify(body)).toBe(201);
  toolsets[name] = String(body.id);
}

beforeAll(async () => {
  stack = await startRewindStack({ env: { REWIND_API_KEYS: `${key}:${NAMESPACE}` } });
  receiver = await startEventReceiver();
  receiver.setSecret(String((await request("PUT", "/v1/events/endpoint", { url: receiver.url })).body["secret"]));
  billing = billingTools();
  servers = {
    bank: await startMcpServer({ tools: [effectCounterTool({ name: "pay" }).tool] }),
    guarded: await startMcpServer({ tools: [echoTool("whoami")], requiredAuthorization: TOKEN }),
    asker: await startMcpServer({ tools: [askTool] }),
    tickets: await startMcpServer({ tools: [ticketTool(OLD_SCHEMA)] }),
    unsure: await startMcpServer({ tools: [droppingTool({ dropAttempts: 1, name: "charge" }).tool] }),
    billing: await startMcpServer({ tools: billing.tools }),
  };
  await register("bank", {
    mcpServers: { bank: { url: servers.bank.url } },
    policies: { "bank.pay": { approval: true } },
  });
  await register("guarded", {
    mcpServers: { svc: { url: servers.guarded.url } },
    credentials: { mcpServers: { svc: { headers: { authorization: TOKEN } } } },
  });
  await register("asker", { mcpServers: { asker: { url: servers.asker.url } } });
  await register("tickets", { mcpServers: { tickets: { url: servers.tickets.url } } });
  await register("unsure", {
    mcpServers: { pay: { url: servers.unsure.url } },
    policies: { "pay.charge": { onInterruption: "at_most_once", onUnknown: "park" } },
  });
  await register("billing", {
    mcpServers: { billing: { url: servers.billing.url } },
    policies: {
      "billing.charge": {
        revert: { tool: "billing.refund", args: { chargeId: "{{result.id}}", amount: "{{args.amount}}" } },
      },
      // The hold's result has no `hold` field: its revert cannot be built, so it is not reverted.
      "billing.hold": { revert: { tool: "billing.release", args: { holdId: "{{result.hold.id}}" } } },
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  await Promise.all([receiver?.close(), ...Object.values(servers ?? {}).map((s) => s.close())]);
});

async function start(toolset: string, script: string, endUser?: string): Promise<string> {
  const { status, body } = await request("POST", "/v1/runs", { toolset, script, ...(endUser ? { endUser } : {}) });
  expect(status, JSON.stringify(body)).toBe(201);
  return String(body.id);
}

/** Waits for the event (which fits its schema, or the receiver fails the wait), and keeps it for the coverage check. */
async function received(runId: string, type: string): Promise<ReceivedEvent> {
  const event = await receiver.waitFor(runId, type, 20_000);
  seen.push(event);
  return event;
}

describe("every event type, as delivered", () => {
  it("call.approval_requested and run.completed name the toolset and the end user", async () => {
    const id = await start(
      toolsets.bank,
      'import { bank } from "rewind:tools";\nexport default async () => { await bank.pay({ label: "rent" }); return { paid: true }; };',
      "ada",
    );
    const asked = await received(id, "call.approval_requested");
    expect(asked).toMatchObject({
      runId: id,
      toolset: toolsets.bank,
      endUser: "ada",
      data: { seq: 1, tool: "bank.pay", args: { label: "rent" } },
    });
    expect(Date.parse(asked.at)).not.toBeNaN();
    expect((await request("POST", `/v1/runs/${id}/calls/1/approve`)).status).toBe(200);
    const done = await received(id, "run.completed");
    expect(done).toMatchObject({ toolset: toolsets.bank, endUser: "ada", data: { result: { paid: true } } });
  });

  it("run.failed carries the failure's type and message, and a null end user", async () => {
    const id = await start(toolsets.bank, 'export default async () => { throw new Error("nope"); };');
    const failed = await received(id, "run.failed");
    expect(failed).toMatchObject({
      toolset: toolsets.bank,
      endUser: null,
      data: { error: { type: "ScriptFailed", message: "Error: nope" } },
    });
  });

  it("credentials.expired names the scope; run.cancelled then lists the parked call", async () => {
    expect(
      (
        await request("PUT", `/v1/toolsets/${toolsets.guarded}/credentials`, {
          mcpServers: { svc: { headers: { authorization: "Bearer stale" } } },
        })
      ).status,
    ).toBe(200);
    const id = await start(
      toolsets.guarded,
      'import { svc } from "rewind:tools";\nexport default async () => await svc.whoami({});',
      "grace",
    );
    const expired = await received(id, "credentials.expired");
    expect(expired).toMatchObject({
      toolset: toolsets.guarded,
      endUser: "grace",
      data: { seq: 1, tool: "svc.whoami", reason: "credentialsExpired", scope: "toolset", endUser: "grace" },
    });
    expect((await request("POST", `/v1/runs/${id}/cancel`)).status).toBe(200);
    const cancelled = await received(id, "run.cancelled");
    expect(cancelled).toMatchObject({
      toolset: toolsets.guarded,
      endUser: "grace",
      data: { unfinished: [{ seq: 1, tool: "svc.whoami", status: "parked" }] },
    });
  });

  it("call.input_requested carries the server's question and schema", async () => {
    const id = await start(
      toolsets.asker,
      'import { asker } from "rewind:tools";\nexport default async () => await asker.ask_person({});',
    );
    const asked = await received(id, "call.input_requested");
    expect(asked).toMatchObject({
      toolset: toolsets.asker,
      endUser: null,
      data: { seq: 1, tool: "asker.ask_person", message: "Who are you?", requestedSchema: PERSON },
    });
    expect((await request("POST", `/v1/runs/${id}/calls/1/elicitation`, { action: "decline" })).status).toBe(200);
    expect((await waitForRun(stack, id, 30_000, auth)).status).toBe("completed");
  });

  it("tool.schema_changed carries the pinned and the current schema", async () => {
    const script = `import { tickets, sleep } from "rewind:tools";
export default async () => { await tickets.create_ticket({ title: "first" }); await sleep("2s"); await tickets.create_ticket({ title: "second" }); };`;
    const id = await start(toolsets.tickets, script);
    await waitFor("the first call at the tickets server", () => servers.tickets.calls.length > 0, { intervalMs: 50 });
    servers.tickets.setTools([ticketTool(NEW_SCHEMA)]);
    const changed = await received(id, "tool.schema_changed");
    expect(changed).toMatchObject({
      toolset: toolsets.tickets,
      endUser: null,
      data: { seq: 3, tool: "tickets.create_ticket", pinned: OLD_SCHEMA, current: NEW_SCHEMA },
    });
    expect((await request("POST", `/v1/runs/${id}/calls/3/reject`)).status).toBe(200);
    expect((await waitForRun(stack, id, 30_000, auth)).status).toBe("failed");
  }, 40_000);

  it("call.outcome_unknown carries the call, what happened and the attempts so far", async () => {
    const id = await start(
      toolsets.unsure,
      'import { pay } from "rewind:tools";\nexport default async () => await pay.charge({ amount: 3 });',
    );
    const unknown = await received(id, "call.outcome_unknown");
    expect(unknown).toMatchObject({
      toolset: toolsets.unsure,
      endUser: null,
      data: {
        seq: 1,
        tool: "pay.charge",
        args: { amount: 3 },
        message: expect.stringMatching(/may or may not have taken effect/),
        attempts: 1,
      },
    });
    expect((await request("POST", `/v1/runs/${id}/calls/1/retry`)).status).toBe(200);
    expect((await waitForRun(stack, id, 30_000, auth)).result).toEqual({ attempt: 2 });
  });

  it("run.approval_requested carries the script as it will run, its hash and the toolset", async () => {
    const { status, body } = await request("POST", "/v1/runs", {
      toolset: toolsets.asker,
      script: "export default async (): Promise<number> => 1;",
      approveScript: true,
    });
    expect(status, JSON.stringify(body)).toBe(201);
    const id = String(body.id);
    const asked = await received(id, "run.approval_requested");
    expect(asked).toMatchObject({
      toolset: toolsets.asker,
      endUser: null,
      data: {
        script: expect.stringContaining("export default async ()"),
        scriptHash: expect.stringMatching(/^[0-9a-f]{64}$/),
        toolset: toolsets.asker,
      },
    });
    expect((asked.data as { script: string }).script).not.toContain("Promise<number>");
    expect((await request("POST", `/v1/runs/${id}/approve`)).status).toBe(200);
    expect((await waitForRun(stack, id, 30_000, auth)).result).toBe(1);
  });

  it("run.rolled_back says who asked and why, what was reverted, what could not be and what never finished", async () => {
    const id = await start(
      toolsets.billing,
      `import { billing, waitForSignal } from "rewind:tools";
export default async () => {
  await billing.charge({ customer: "ada", amount: 12 });
  await billing.hold({ account: "acct-ada" });
  await waitForSignal("never");
};`,
      "ada",
    );
    await waitFor("the run to wait for its signal", async () => (await request("GET", `/v1/runs/${id}/journal`)).body, {
      until: (journal) => JSON.stringify(journal["entries"]).includes('"tool":"rewind.waitForSignal"'),
    });
    const asked = await request("POST", `/v1/runs/${id}/rollback`, { by: "ops", reason: "order cancelled" });
    expect(asked.status, JSON.stringify(asked.body)).toBe(202);
    const rolledBack = await received(id, "run.rolled_back");
    expect(rolledBack).toMatchObject({
      toolset: toolsets.billing,
      endUser: "ada",
      data: {
        trigger: {
          kind: "requested",
          principal: expect.stringMatching(`^${NAMESPACE}/`),
          by: "ops",
          reason: "order cancelled",
        },
        reverted: [{ seq: 1, tool: "billing.charge", revertSeq: 4, revertTool: "billing.refund" }],
        notReverted: [
          {
            seq: 2,
            tool: "billing.hold",
            revertTool: "billing.release",
            reason: `the revert's arguments could not be built: {{result.hold.id}}: result has no "hold"`,
          },
        ],
        unfinished: [{ seq: 3, tool: "rewind.waitForSignal", status: "running" }],
      },
    });
    expect(rolledBack.data).not.toHaveProperty("state");
    expect(Date.parse(rolledBack.at)).not.toBeNaN();
    // The event tells what the service saw: the charge refunded with the run's key for the revert.
    expect(billing.state.effects.map(({ tool, key }) => [tool, key])).toEqual([
      ["charge", `${id}/1`],
      ["hold", `${id}/2`],
      ["refund", `${id}/4`],
    ]);
    expect((await waitForRun(stack, id, 30_000, auth)).status).toBe("rolledBack");
  });

  it("covered every event type, and the receiver refused none", () => {
    expect([...new Set(seen.map((e) => e.type))].sort()).toEqual([...EVENT_TYPES].sort());
    expect(receiver.misfits).toEqual([]);
  });
});
