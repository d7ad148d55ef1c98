/**
 * A server that changes under a sleeping run, or between two calls, and forks: a call that no
 * longer fits the server's schema (or whose tool is gone) is parked with the pinned and the current schema, then sent,
 * rejected or left to a fork; a fork reuses its parent's finished calls up to the first
 * divergence and sends the rest under its own keys.
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEventReceiver, type EventReceiver } from "../helpers/event-receiver.ts";
import { startMcpServer, type TestMcpServer, type TestToolDefinition } from "../helpers/mcp-test-server.ts";
import { IDEMPOTENCY_KEY, echoTool, failingTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
let receiver: EventReceiver;

const oldSchema = { type: "object", properties: { title: { type: "string" } }, required: ["title"] };
const newSchema = {
  type: "object",
  properties: { title: { type: "string" }, project: { type: "string" } },
  required: ["title", "project"],
};
const createTicket = (inputSchema: Record<string, unknown>): TestToolDefinition => ({
  ...echoTool("create_ticket"),
  inputSchema,
});

beforeAll(async () => {
  stack = await startRewindStack();
  receiver = await startEventReceiver();
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

function waitParked(id: string) {
  return waitFor(
    `run ${id} to park a call`,
    async () => {
      const { body } = await stack.request("GET", `/v1/runs/${id}`);
      const parked = body["parked"] as { seq: number; reason: string; details: Record<string, unknown> }[] | undefined;
      return body.status === "parked" && parked?.length ? parked : undefined;
    },
    { timeoutMs: 20_000 },
  );
}

const SLEEPY = `import { tickets, sleep, ToolError } from "rewind:tools";
export default async function main() {
  await tickets.create_ticket({ title: "first" });
  await sleep("3s");
  try { return await tickets.create_ticket({ title: "second" }); }
  catch (e) { return e instanceof ToolError ? e.code : String(e); }
}`;

describe("a server that changes during a run", () => {
  async function runAgainstChangingServer(change: (server: TestMcpServer) => void) {
    const server = await startMcpServer({ tools: [createTicket(oldSchema)] });
    const toolset = await registerToolset(stack, { mcpServers: { tickets: { url: server.url } } });
    const id = await startRun(stack, { toolset, script: SLEEPY });
    await waitFor("the first call at the server", () => server.calls.length > 0, { intervalMs: 50 });
    change(server);
    const parked = await waitParked(id);
    return { server, id, parked };
  }

  it("parks a call that no longer fits, and approve sends it against the new schema", async () => {
    const { server, id, parked } = await runAgainstChangingServer((s) => s.setTools([createTicket(newSchema)]));
    expect(parked).toEqual([
      expect.objectContaining({
        seq: 3,
        reason: "schemaChanged",
        details: expect.objectContaining({ pinned: oldSchema, current: newSchema }),
      }),
    ]);
    expect((await stack.request("POST", `/v1/runs/${id}/calls/3/approve`)).status).toBe(200);
    const done = await waitForRun(stack, id);
    expect(done.status).toBe("completed");
    expect(server.calls.filter((c) => c.meta[IDEMPOTENCY_KEY] === `${id}/3`)).toHaveLength(1);
    await server.close();
  }, 60_000);

  it("gives the script ToolError(schemaChanged) on reject, and parks a call whose tool is gone", async () => {
    const rejected = await runAgainstChangingServer((s) => s.setTools([createTicket(newSchema)]));
    expect(
      (await stack.request("POST", `/v1/runs/${rejected.id}/calls/3/reject`, { reason: "fix the script" })).status,
    ).toBe(200);
    expect((await waitForRun(stack, rejected.id)).result).toBe("schemaChanged");
    expect(rejected.server.calls.filter((c) => c.meta[IDEMPOTENCY_KEY] === `${rejected.id}/3`)).toHaveLength(0);
    await rejected.server.close();

    const gone = await runAgainstChangingServer((s) => s.setTools([echoTool("something_else")]));
    expect(gone.parked[0]).toMatchObject({ reason: "schemaChanged", details: { current: null } });
    expect((await stack.request("POST", `/v1/runs/${gone.id}/cancel`)).status).toBe(200);
    expect((await waitForRun(stack, gone.id)).status).toBe("cancelled");
    await gone.server.close();
  }, 90_000);

  it("catches a change between two calls with no wait between: the server's refusal makes it list again, and the call parks", async () => {
    const server = await startMcpServer({ tools: [] });
    // The new version checks its arguments, as real servers do: a call without `project` is invalid params.
    const strict: TestToolDefinition = {
      ...createTicket(newSchema),
      handler: async (args) => {
        if (typeof args["project"] !== "string")
          throw new McpError(ErrorCode.InvalidParams, "Invalid arguments for tool create_ticket: project is required");
        return { content: [{ type: "text", text: "created" }] };
      },
    };
    // The first call's answer comes from the old version, which is then replaced (no notification).
    const changing: TestToolDefinition = {
      ...createTicket(oldSchema),
      handler: async () => {
        server.setTools([strict]);
        return { content: [{ type: "text", text: "first" }] };
      },
    };
    server.setTools([changing]);
    try {
      const toolset = await registerToolset(stack, { mcpServers: { tickets: { url: server.url } } });
      const id = await startRun(stack, {
        toolset,
        script: `import { tickets, ToolError } from "rewind:tools";
export default async function main() {
  await tickets.create_ticket({ title: "first" });
  try { return await tickets.create_ticket({ title: "second" }); }
  catch (e) { return e instanceof ToolError ? e.code : String(e); }
}`,
      });
      const parked = await waitParked(id);
      expect(parked[0]).toMatchObject({ seq: 2, reason: "schemaChanged", details: { current: newSchema } });
      expect(String(parked[0]?.details["message"])).toMatch(/project/);
      expect((await stack.request("POST", `/v1/runs/${id}/calls/2/reject`, { reason: "changed" })).status).toBe(200);
      expect((await waitForRun(stack, id)).result).toBe("schemaChanged");
    } finally {
      await server.close();
    }
  });
});

describe("fork", () => {
  it("reuses the parent's calls before the divergence and sends the rest under new keys", async () => {
    const server = await startMcpServer({ tools: [echoTool("lookup"), failingTool("no such project", "create")] });
    const toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
    const parent = await startRun(stack, {
      toolset,
      script:
        'import { svc } from "rewind:tools";\nexport default async () => { const a = await svc.lookup({ message: "a" }); const b = await svc.lookup({ message: "b" }); await svc.create({ project: "typo" }); return [a, b]; };',
    });
    expect((await waitForRun(stack, parent)).status).toBe("failed");
    const before = server.calls.length;
    const forked = await stack.request("POST", `/v1/runs/${parent}/fork`, {
      script:
        'import { svc } from "rewind:tools";\nexport default async () => { const a = await svc.lookup({ message: "a" }); const b = await svc.lookup({ message: "b" }); const c = await svc.lookup({ message: "fixed" }); return [a, b, c].length; };',
    });
    expect(forked.status, JSON.stringify(forked.body)).toBe(201);
    const child = String(forked.body.id);
    expect(forked.body["forkedFrom"]).toBe(parent);
    expect((await waitForRun(stack, child)).result).toBe(3);
    const sent = server.calls.slice(before).map((c) => c.meta[IDEMPOTENCY_KEY]);
    expect(sent).toEqual([`${child}/3`]);
    const journal = await stack.request("GET", `/v1/runs/${child}/journal`);
    expect(journal.body["fork"]).toEqual({ parentRunId: parent, divergedAt: 3 });
    expect((journal.body["entries"] as { fromParent?: string }[]).map((e) => e.fromParent ?? null)).toEqual([
      parent,
      parent,
      null,
    ]);
    expect(
      (
        await stack.request("POST", `/v1/runs/${parent}/fork`, {
          script: 'export default async () => 1; const x: number = "s";',
        })
      ).status,
    ).toBe(422);
    await server.close();
  }, 60_000);
});
