/**
 * Spare sessions, through the pool against a real MCP server: a run's first call takes the session
 * opened after the last run's instead of opening its own, a spare is handed over once and only
 * for its own key (namespace, server, credentials), one nobody takes is closed and its session
 * deleted, and a spare that failed to open, closed, or was forgotten by a restarting server never
 * costs a call more than a lost session of its own would.
 */
import { describe, expect, it } from "vitest";
import { createMcpPool, type McpCallRequest, type McpPool, type McpPoolOptions } from "../../src/mcp/index.ts";
import { type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { perTestCleanup } from "../helpers/per-test-cleanup.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { waitFor } from "../helpers/wait-for.ts";

const { defer, mcpServer } = perTestCleanup();

function pool(options: McpPoolOptions): McpPool {
  const created = createMcpPool(options);
  defer(() => created.close());
  return created;
}

/** A run's call: its own pool key, and the spare key its namespace, server and credentials give. */
const runCall = (on: McpPool, url: string, run: string, extra: Partial<McpCallRequest> = {}) =>
  on.callTool({
    url,
    poolKey: `ns/${run}#${url}`,
    spareKey: `ns#${url}`,
    name: "echo",
    arguments: { message: run },
    meta: {},
    timeoutMs: 5_000,
    ...extra,
  });

/** The session each call of `run` was sent on, as the server saw it. */
const sessionsOf = (server: TestMcpServer, run: string): (string | undefined)[] =>
  server.calls.filter((c) => c.arguments["message"] === run).map((c) => c.sessionId);

describe("spare sessions", () => {
  it("hands the next run the session opened after the last run's, once, and never one a run has used", async () => {
    const server = await mcpServer({ tools: [echoTool()] });
    const shared = pool({ spareIdleMs: 10_000 });
    await runCall(shared, server.url, "run_a");
    await waitFor("a spare to open", () => server.stats.sessionsOpened === 2 && shared.spareSessions === 1, {
      timeoutMs: 5_000,
    });
    await runCall(shared, server.url, "run_b");
    // run_b opened nothing itself: its call went out on the spare.
    expect(server.stats.initializeRequests).toBe(2);
    await runCall(shared, server.url, "run_a");
    await runCall(shared, server.url, "run_b");
    const [a1, a2] = sessionsOf(server, "run_a");
    const [b1, b2] = sessionsOf(server, "run_b");
    expect(a1).toBeDefined();
    expect(b1).toBeDefined();
    expect(a2).toBe(a1);
    expect(b2).toBe(b1);
    expect(b1).not.toBe(a1);
    // Taking it made another for the run after.
    await waitFor("the next spare to open", () => server.stats.sessionsOpened === 3, { timeoutMs: 5_000 });
    await runCall(shared, server.url, "run_c");
    expect(server.stats.initializeRequests).toBe(3);
    expect(new Set([a1, b1, ...sessionsOf(server, "run_c")]).size).toBe(3);
  });

  it("keeps spares apart by key: a call of other credentials or another namespace opens its own", async () => {
    const server = await mcpServer({ tools: [echoTool()] });
    const shared = pool({ spareIdleMs: 10_000 });
    await runCall(shared, server.url, "run_a");
    await waitFor("a spare to open", () => shared.spareSessions === 1, { timeoutMs: 5_000 });
    await runCall(shared, server.url, "run_other", {
      spareKey: `other#${server.url}`,
      headers: { authorization: "Bearer other" },
    });
    // Its own session, with its own headers; the first key's spare is still there for its next run.
    expect(server.stats.initializeRequests).toBe(3);
    expect(server.calls.find((c) => c.arguments["message"] === "run_other")?.headers.authorization).toBe(
      "Bearer other",
    );
    await runCall(shared, server.url, "run_b");
    expect(server.stats.initializeRequests).toBe(3);
  });

  it("closes a spare nobody took within spareIdleMs, deleting its session at the server", async () => {
    const server = await mcpServer({ tools: [echoTool()] });
    const shared = pool({ spareIdleMs: 300, maxIdleMs: 60_000 });
    await runCall(shared, server.url, "run_a");
    await waitFor("a spare to open", () => server.stats.sessionsOpened === 2, { timeoutMs: 5_000 });
    await waitFor("the spare to be closed", () => server.stats.sessionsDeleted === 1 && shared.spareSessions === 0, {
      timeoutMs: 5_000,
    });
    // The run's own session is untouched.
    await runCall(shared, server.url, "run_a");
    const [first, second] = sessionsOf(server, "run_a");
    expect(second).toBe(first);
  });

  it("keeps no spares unless asked, and none for calls that give no spare key", async () => {
    const server = await mcpServer({ tools: [echoTool()] });
    const plain = pool({});
    await runCall(plain, server.url, "run_a");
    const spared = pool({ spareIdleMs: 10_000 });
    await spared.callTool({ url: server.url, poolKey: "k", name: "echo", arguments: {}, meta: {}, timeoutMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server.stats.sessionsOpened).toBe(2);
    expect(plain.spareSessions).toBe(0);
    expect(spared.spareSessions).toBe(0);
  });

  it("never hands over a spare that failed to open: the run opens its own and its call goes through", async () => {
    let refuseInitialize = false;
    let initializeAsked = 0;
    const server = await mcpServer({
      tools: [echoTool()],
      onRequest: (info) => {
        if (info.method === "initialize") initializeAsked++;
      },
      intercept: (info) =>
        refuseInitialize && info.method === "initialize" ? { status: 503, body: "starting up" } : undefined,
    });
    const shared = pool({ spareIdleMs: 10_000 });
    await runCall(shared, server.url, "run_a");
    refuseInitialize = true;
    // The spare's initialize is refused, and the failed spare is dropped.
    await waitFor("the spare's initialize", () => initializeAsked === 2, { timeoutMs: 5_000 });
    await waitFor("the failed spare to be dropped", () => shared.spareSessions === 0, { timeoutMs: 5_000 });
    refuseInitialize = false;
    const outcome = await runCall(shared, server.url, "run_b");
    expect(outcome.isError).toBe(false);
    expect(outcome.resent).toBeUndefined();
    expect(sessionsOf(server, "run_b")).toHaveLength(1);
    expect(sessionsOf(server, "run_b")[0]).not.toBe(sessionsOf(server, "run_a")[0]);
  });

  it("a spare the server forgot (it restarted) costs the call one send on a new session, like a lost session", async () => {
    const server = await mcpServer({ tools: [echoTool()] });
    const shared = pool({ spareIdleMs: 10_000 });
    await runCall(shared, server.url, "run_a");
    await waitFor("a spare to open", () => server.stats.sessionsOpened === 2 && shared.spareSessions === 1, {
      timeoutMs: 5_000,
    });
    await server.dropSessions();
    const outcome = await runCall(shared, server.url, "run_b");
    expect(outcome.isError).toBe(false);
    expect(outcome.resent).toBe(1);
    // The send on the forgotten spare never reached the tool; the one on the session opened next did.
    expect(server.stats.initializeRequests).toBe(3);
    const [ran] = sessionsOf(server, "run_b");
    expect(sessionsOf(server, "run_b")).toHaveLength(1);
    expect(ran).not.toBe(sessionsOf(server, "run_a")[0]);
  });

  it("closes its spares with the pool", async () => {
    const server = await mcpServer({ tools: [echoTool()] });
    const shared = createMcpPool({ spareIdleMs: 10_000 });
    await runCall(shared, server.url, "run_a");
    await waitFor("a spare to open", () => shared.spareSessions === 1 && server.stats.sessionsOpened === 2, {
      timeoutMs: 5_000,
    });
    await shared.close();
    expect(shared.spareSessions).toBe(0);
    expect(server.stats.sessionsDeleted).toBe(2);
  });
});
