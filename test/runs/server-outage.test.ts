/**
 * An MCP server that is down: a call that could not reach it sent nothing, so it is tried again
 * within its attempt for as long as the call's timeout allows. An outage shorter than the
 * timeout costs the call time, never its result (nor an attempt); one that outlasts it fails
 * the call once, saying how long the server was tried and that the call was not sent; and a call
 * an earlier attempt did send is never said to be unsent.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getFreePort } from "../helpers/free-port.ts";
import { startMcpServer, type TestMcpServer, type TestToolDefinition } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;

beforeAll(async () => {
  stack = await startRewindStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** A server on a fixed port, so it can be stopped and started again where the toolset points. */
async function serverOn(port: number, tools: TestToolDefinition[]): Promise<TestMcpServer> {
  return startMcpServer({ tools, port });
}

async function journalOf(id: string): Promise<{ attempts?: number; status?: string }[]> {
  const journal = await stack.request("GET", `/v1/runs/${id}/journal`);
  return journal.body["entries"] as { attempts?: number; status?: string }[];
}

describe("a server outage", () => {
  it("is ridden out when shorter than the call's timeout: the call completes, on one attempt", async () => {
    const port = await getFreePort();
    let server = await serverOn(port, [echoTool()]);
    const toolset = await registerToolset(stack, {
      mcpServers: { svc: { url: server.url } },
      policies: { "svc.echo": { timeout: "60s" } },
    });
    await server.close();
    const id = await startRun(stack, {
      toolset,
      script: `import { svc } from "rewind:tools";\nexport default async () => svc.echo({ message: "after the outage" });`,
    });
    // Longer than Temporal's five retries from 0.5 s would have lasted (some 7.5 s).
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    server = await serverOn(port, [echoTool()]);
    try {
      const done = await waitForRun(stack, id, 60_000);
      expect(done.status, JSON.stringify(done.error)).toBe("completed");
      expect(done.result).toMatchObject({ args: { message: "after the outage" } });
      expect((await journalOf(id))[0]?.attempts).toBe(1);
    } finally {
      await server.close();
    }
  }, 90_000);

  it("fails the call once it outlasts the call's timeout, saying how long and that nothing was sent", async () => {
    const port = await getFreePort();
    const server = await serverOn(port, [echoTool()]);
    const toolset = await registerToolset(stack, {
      mcpServers: { svc: { url: server.url } },
      policies: { "svc.echo": { timeout: "3s" } },
    });
    await server.close();
    const began = Date.now();
    const id = await startRun(stack, {
      toolset,
      script: `import { svc, ToolError } from "rewind:tools";
export default async () => { try { await svc.echo({ message: "x" }); } catch (e) { const t = e as ToolError; return { code: t.code, message: t.message, details: t.details }; } };`,
    });
    const done = await waitForRun(stack, id, 60_000);
    const result = done.result as { code: string; message: string; details: { reason: string } };
    expect(result.code).toBe("toolFailed");
    expect(result.details).toEqual({ reason: "unreachable" });
    expect(result.message).toMatch(/the server could not be reached; the call was not sent/);
    expect(result.message).toMatch(/tried \d+ times over [\d.]+ s; the call's timeout is 3 s/);
    // One attempt, that waited out the timeout: not five.
    expect((await journalOf(id))[0]?.attempts).toBe(1);
    expect(Date.now() - began).toBeGreaterThanOrEqual(3_000);
  }, 60_000);

  it("never says 'not sent' of a call an earlier attempt sent", async () => {
    const port = await getFreePort();
    // The first send reaches the server, which then goes away for good.
    const vanishing: TestToolDefinition = {
      name: "vanish",
      inputSchema: { type: "object" },
      handler: async (_args, { dropConnection, signal }) => {
        dropConnection();
        void server.close();
        return new Promise((resolve) =>
          signal.addEventListener("abort", () => resolve({ content: [] }), { once: true }),
        );
      },
    };
    const server = await serverOn(port, [vanishing]);
    const toolset = await registerToolset(stack, {
      mcpServers: { svc: { url: server.url } },
      policies: { "svc.vanish": { timeout: "3s" } },
    });
    const id = await startRun(stack, {
      toolset,
      script: `import { svc, ToolError } from "rewind:tools";
export default async () => { try { await svc.vanish({}); } catch (e) { const t = e as ToolError; return { code: t.code, message: t.message, details: t.details }; } };`,
    });
    await waitFor("the first attempt to reach the server", async () => server.calls.length > 0, { timeoutMs: 20_000 });
    const done = await waitForRun(stack, id, 60_000);
    const result = done.result as { code: string; message: string; details: unknown };
    expect(result.code).toBe("toolFailed");
    expect(result.details).toEqual({ reason: "unreachable", sent: true });
    expect(result.message).not.toMatch(/not sent/);
    expect(result.message).toMatch(/an earlier attempt sent the call, so it may have taken effect/);
    expect((await journalOf(id))[0]?.attempts).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
