/**
 * The Temporal UI alone tells a run's story: each run starts with a static summary (toolset, end
 * user, the first line of its script's leading comment), static details and a memo; its current
 * details say what it is doing or waiting for, and change as it goes; who approved or rejected a
 * call (the API key's principal and `by`) is in the call's journal entry; `RewindStatus` is right
 * after every end, a cancel while parked for any reason included. Read the way the UI reads them:
 * describe for summary, details and memo, the SDK's metadata query for the current details.
 */
import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SEARCH_ATTRIBUTES } from "../../src/shared/run.ts";
import { deliverSignal } from "../../src/workflows/run/messages.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { gateTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

const key = `story-key-${randomUUID()}`;
const namespace = `story-${randomUUID().slice(0, 8)}`;
const auth = { authorization: `Bearer ${key}` };
const principal = `${namespace}/key-${createHash("sha256").update(key).digest("hex").slice(0, 8)}`;
let stack: RewindStack;
let server: TestMcpServer;
let locked: TestMcpServer;
let toolset: string;
let lockedToolset: string;
const gate = gateTool();
/** A second gate: one gate holds one call per run. */
const gate2 = gateTool("gate2");

const OBJECT = { type: "object" } as const;
const ok = async () => ({ content: [{ type: "text" as const, text: "ok" }] });

const request = (method: string, route: string, body?: unknown) => stack.request(method, route, body, auth);

beforeAll(async () => {
  stack = await startRewindStack({ env: { REWIND_API_KEYS: `${key}:${namespace}` } });
  server = await startMcpServer({
    tools: [
      { name: "create_ticket", inputSchema: OBJECT, handler: ok },
      gate.tool,
      gate2.tool,
      {
        name: "ask",
        inputSchema: OBJECT,
        handler: async (_args, extra) => ({
          content: [
            {
              type: "text",
              text: JSON.stringify(
                await extra.ask("elicitation/create", {
                  message: "Which queue?",
                  requestedSchema: { type: "object", properties: { queue: { type: "string" } } },
                }),
              ),
            },
          ],
        }),
      },
    ],
  });
  locked = await startMcpServer({
    tools: [{ name: "read", inputSchema: OBJECT, handler: ok }],
    requiredAuthorization: "Bearer right",
  });
  const registered = await request("POST", "/v1/toolsets", {
    mcpServers: { tickets: { url: server.url } },
    policies: { "tickets.create_ticket": { approval: true } },
  });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  toolset = String(registered.body.id);
  const lockedRegistered = await request("POST", "/v1/toolsets", {
    mcpServers: { crm: { url: locked.url } },
    credentials: { mcpServers: { crm: { headers: { authorization: "Bearer right" } } } },
  });
  expect(lockedRegistered.status, JSON.stringify(lockedRegistered.body)).toBe(201);
  lockedToolset = String(lockedRegistered.body.id);
});
afterAll(async () => {
  gate.releaseAll();
  gate2.releaseAll();
  await stack?.stop();
  await server?.close();
  await locked?.close();
});

async function start(body: Record<string, unknown>): Promise<ApiBody> {
  const { status, body: run } = await request("POST", "/v1/runs", { toolset, ...body });
  expect(status, JSON.stringify(run)).toBe(201);
  return run;
}

/** The run's current details, as the Temporal UI asks for them. */
async function currentDetails(id: string): Promise<string> {
  const metadata = await stack.client.workflow
    .getHandle(id)
    .query<{ currentDetails?: string }>("__temporal_workflow_metadata");
  return metadata.currentDetails ?? "";
}

function detailsBecome(id: string, expected: string | RegExp): Promise<string> {
  return waitFor(`run ${id}'s current details to be ${String(expected)}`, () => currentDetails(id), {
    until: (seen) => (typeof expected === "string" ? seen === expected : expected.test(seen)),
  });
}

async function statusAttribute(id: string): Promise<unknown> {
  return (await stack.client.workflow.getHandle(id).describe()).typedSearchAttributes.get(SEARCH_ATTRIBUTES.status);
}

async function cancelled(id: string): Promise<void> {
  expect((await request("POST", `/v1/runs/${id}/cancel`)).status).toBe(200);
  expect((await waitForRun(stack, id, 30_000, auth)).status).toBe("cancelled");
  expect(await statusAttribute(id)).toBe("cancelled");
  expect(await currentDetails(id)).toBe("cancelled");
}

const APPROVAL_SCRIPT = `import { tickets } from "rewind:tools";
// Files a ticket for each failing check
// (a second line the summary leaves out)
export default async function main() {
  return await tickets.create_ticket({ title: "disk full" });
}`;

describe("what the Temporal UI shows of a run", () => {
  it("a run parked for approval: summary, details, memo, start time and what it waits for", async () => {
    const run = await start({ script: APPROVAL_SCRIPT, endUser: "alice" });
    const id = String(run.id);
    expect(await detailsBecome(id, "waiting for approval: call 1 tickets.create_ticket")).toBeTruthy();
    const described = await stack.client.workflow.getHandle(id).describe();
    expect(await described.staticSummary()).toBe(
      `toolset ${toolset.slice(0, 15)}… · end user alice · Files a ticket for each failing check`,
    );
    const details = await described.staticDetails();
    expect(details).toContain(`toolset: ${toolset}`);
    expect(details).toContain("end user: alice");
    expect(details).toContain("script: Files a ticket for each failing check");
    expect(described.memo).toEqual({ toolset, endUser: "alice" });
    expect(described.typedSearchAttributes.get(SEARCH_ATTRIBUTES.startedAt)?.toISOString()).toBe(run["startedAt"]);
    expect(await statusAttribute(id)).toBe("parked");
    expect((await request("POST", `/v1/runs/${id}/calls/1/approve`, { by: "alice@example.com" })).status).toBe(200);
    expect((await waitForRun(stack, id, 30_000, auth)).status).toBe("completed");
    expect(await currentDetails(id)).toBe("completed");
    expect(await statusAttribute(id)).toBe("completed");
  });

  it("a script without a leading comment and a run without an end user have a shorter summary", async () => {
    const id = String(
      (
        await start({
          script:
            'import { tickets } from "rewind:tools";\nexport default async () => await tickets.create_ticket({});',
        })
      ).id,
    );
    await detailsBecome(id, /^waiting for approval/);
    const described = await stack.client.workflow.getHandle(id).describe();
    expect(await described.staticSummary()).toBe(`toolset ${toolset.slice(0, 15)}…`);
    expect(described.memo).toEqual({ toolset });
    await cancelled(id);
  });

  it("says what a run is doing as it goes: calls running, a signal awaited, a sleep, then cancelled", async () => {
    const script = `import { tickets, sleep, waitForSignal } from "rewind:tools";
export default async function main() {
  await Promise.all([tickets.gate({}), tickets.gate2({})]);
  await waitForSignal("go");
  await sleep("1h");
}`;
    const run = await start({ script });
    const id = String(run.id);
    await detailsBecome(id, "running 2 calls: tickets.gate #1, tickets.gate2 #2");
    await waitFor("the call to gate2", () => gate2.holds(id), { intervalMs: 50 });
    gate2.release(id);
    await detailsBecome(id, "running 1 call: tickets.gate #1");
    await waitFor("the call to gate", () => gate.holds(id), { intervalMs: 50 });
    gate.release(id);
    await detailsBecome(id, 'waiting for signal "go": call 3');
    await stack.client.workflow.getHandle(id).signal(deliverSignal, { name: "go", payload: null });
    const sleeping = await detailsBecome(id, /^sleeping until (\S+): call 4$/);
    const until = Date.parse(/^sleeping until (\S+):/.exec(sleeping)?.[1] ?? "");
    expect(until - Date.now()).toBeGreaterThan(50 * 60_000);
    expect(until - Date.now()).toBeLessThan(61 * 60_000);
    expect(await statusAttribute(id)).toBe("running");
    await cancelled(id);
  });

  it("names credentials and input a parked call waits for, and a cancel ends each parked run as cancelled", async () => {
    const onCredentials = await request("POST", "/v1/runs", {
      toolset: lockedToolset,
      script: 'import { crm } from "rewind:tools";\nexport default async () => await crm.read({});',
      credentials: { mcpServers: { crm: { headers: { authorization: "Bearer stale" } } } },
    });
    expect(onCredentials.status, JSON.stringify(onCredentials.body)).toBe(201);
    const onInput = await start({
      script: 'import { tickets } from "rewind:tools";\nexport default async () => await tickets.ask({});',
    });
    await detailsBecome(String(onCredentials.body.id), "waiting for credentials (run): call 1 crm.read");
    await detailsBecome(String(onInput.id), "waiting for input: call 1 tickets.ask");
    expect(await statusAttribute(String(onCredentials.body.id))).toBe("parked");
    expect(await statusAttribute(String(onInput.id))).toBe("parked");
    await cancelled(String(onCredentials.body.id));
    await cancelled(String(onInput.id));
  });

  it("a failed run says why", async () => {
    const id = String(
      (await start({ script: 'export default async () => { throw new Error("the queue is gone"); };' })).id,
    );
    expect((await waitForRun(stack, id, 30_000, auth)).status).toBe("failed");
    expect(await currentDetails(id)).toBe("failed: Error: the queue is gone");
    expect(await statusAttribute(id)).toBe("failed");
  });
});

describe("who decided a parked call", () => {
  async function parkedRun(): Promise<string> {
    const id = String((await start({ script: APPROVAL_SCRIPT })).id);
    await detailsBecome(id, /^waiting for approval/);
    return id;
  }

  /** The run's first journal entry; a query a loaded machine timed out is asked again, any other refusal fails. */
  async function journalEntry(id: string): Promise<Record<string, unknown>> {
    for (let asked = 1; ; asked++) {
      const { status, body } = await request("GET", `/v1/runs/${id}/journal`);
      if (status === 200) return (body["entries"] as Record<string, unknown>[])[0] ?? {};
      if (asked >= 5 || status < 500) throw new Error(`journal of ${id}: HTTP ${status} ${JSON.stringify(body)}`);
    }
  }

  it("records the API key's principal and the given `by` for an approval, never the key", async () => {
    const id = await parkedRun();
    const answer = await request("POST", `/v1/runs/${id}/calls/1/approve`, { by: "alice@example.com" });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({
      seq: 1,
      decidedBy: { principal, by: "alice@example.com", decision: "approved" },
    });
    await waitForRun(stack, id, 30_000, auth);
    const entry = await journalEntry(id);
    expect(entry["decidedBy"]).toEqual(answer.body["decidedBy"]);
    expect(entry["approved"]).toBe(true);
    expect(JSON.stringify(entry)).not.toContain(key);
  });

  it("records who rejected, with the principal alone when no `by` is given", async () => {
    const id = await parkedRun();
    const answer = await request("POST", `/v1/runs/${id}/calls/1/reject`, { reason: "not today" });
    expect(answer.status).toBe(200);
    await waitForRun(stack, id, 30_000, auth);
    const entry = await journalEntry(id);
    expect(entry["decidedBy"]).toMatchObject({ principal, decision: "rejected" });
    expect(entry["decidedBy"]).not.toHaveProperty("by");
  });

  it("refuses a `by` that is too long, empty, not a string or holds control characters (400, naming the field)", async () => {
    const id = await parkedRun();
    for (const by of ["x".repeat(201), "", 42, "eve\nadmin"]) {
      const answer = await request("POST", `/v1/runs/${id}/calls/1/approve`, { by });
      expect(answer.status, JSON.stringify(by)).toBe(400);
      expect(answer.body.error?.message).toMatch(/^invalid request body: by: /);
    }
    expect((await request("POST", `/v1/runs/${id}/calls/1/reject`, { by: "y".repeat(201) })).status).toBe(400);
    const accepted = await request("POST", `/v1/runs/${id}/calls/1/approve`, { by: "b".repeat(200) });
    expect(accepted.status).toBe(200);
    await waitForRun(stack, id, 30_000, auth);
    expect((await journalEntry(id))["decidedBy"]).toMatchObject({ by: "b".repeat(200) });
  });
});

describe("child runs", () => {
  it("start with the same summary, memo and start time as runs the API starts", async () => {
    const stored = await request("POST", "/v1/workflows", {
      name: "waiter",
      script:
        'import { waitForSignal } from "rewind:tools";\n// Waits for the go signal\nexport default async () => await waitForSignal<string>("go");',
    });
    expect(stored.status, JSON.stringify(stored.body)).toBe(201);
    const withChild = await request("POST", "/v1/toolsets", { workflows: { waiter: String(stored.body.id) } });
    expect(withChild.status, JSON.stringify(withChild.body)).toBe(201);
    const parentToolset = String(withChild.body.id);
    const parent = String(
      (
        await start({
          toolset: parentToolset,
          endUser: "bob",
          script:
            'import { workflows } from "rewind:tools";\nexport default async () => await (await workflows.waiter.start()).result();',
        })
      ).id,
    );
    const waiting = await detailsBecome(parent, /^waiting for run (run_\w+): call 2$/);
    const child = /^waiting for run (run_\w+)/.exec(waiting)?.[1] ?? "";
    await detailsBecome(child, 'waiting for signal "go": call 1');
    const described = await stack.client.workflow.getHandle(child).describe();
    expect(await described.staticSummary()).toBe(
      `toolset ${String(stored.body.toolset).slice(0, 15)}… · end user bob · Waits for the go signal`,
    );
    expect(await described.staticDetails()).toContain(`started by run ${parent}`);
    expect(described.memo).toEqual({ toolset: stored.body.toolset, endUser: "bob" });
    const startedAt = described.typedSearchAttributes.get(SEARCH_ATTRIBUTES.startedAt);
    expect(startedAt).toBeInstanceOf(Date);
    expect(Math.abs((startedAt?.getTime() ?? 0) - described.startTime.getTime())).toBeLessThan(5_000);
    await cancelled(parent);
    expect((await waitForRun(stack, child, 30_000, auth)).status).toBe("cancelled");
  });
});
