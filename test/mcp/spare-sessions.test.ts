/**
 * Spare sessions, through the pool against a real MCP server: a run's first call takes the session
 * opened after the last run's instead of opening its own, a spare is handed over once and only
 * for its own key (namespace, server, credentials), one nobody takes is closed and its session
 * deleted, a spare that failed to open, closed, or was forgotten by a restarting server never
 * costs a call more than a lost session of its own would, and under a guarded target policy a
 * spare whose server's name now answers a refused address is never used.
 *
 * Which session a call went out on is what the server saw; when a session was opened, its
 * `notifications/initialized`. A spare is opened 50 ms after the session the last run took is
 * ready, so the tests compare sessions, never counts taken at a moment a refill may fall into.
 */
import { describe, expect, it } from "vitest";
import { createTargetPolicy } from "../../src/http-tool/index.ts";
import { createMcpPool, type McpCallRequest, type McpPool, type McpPoolOptions } from "../../src/mcp/index.ts";
import { tableResolver } from "../helpers/http-loopback.ts";
import type { StartMcpServerOptions, TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { perTestCleanup } from "../helpers/per-test-cleanup.ts";
import { waitFor } from "../helpers/wait-for.ts";

const { defer, mcpServer } = perTestCleanup();

function pool(options: McpPoolOptions): McpPool {
  const created = createMcpPool(options);
  defer(() => created.close());
  return created;
}

/** A test server that notes each session it initialized, with the credentials it was opened with. */
async function server(options: Partial<StartMcpServerOptions> = {}): Promise<{
  mcp: TestMcpServer;
  opened: { session: string; authorization: string | undefined }[];
}> {
  const opened: { session: string; authorization: string | undefined }[] = [];
  const mcp = await mcpServer({
    tools: [echoTool()],
    ...options,
    onRequest: (info) => {
      const session = info.headers["mcp-session-id"];
      if (info.method === "notifications/initialized" && session)
        opened.push({ session, authorization: info.headers.authorization });
      options.onRequest?.(info);
    },
  });
  return { mcp, opened };
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

/** The sessions the calls of `run` were sent on, as the server saw them. */
const sessionsOf = (mcp: TestMcpServer, run: string): (string | undefined)[] =>
  mcp.calls.filter((c) => c.arguments["message"] === run).map((c) => c.sessionId);

const sessionIds = (opened: { session: string }[]): string[] => opened.map((o) => o.session);

describe("spare sessions", () => {
  it("hands the next run the session opened after the last run's, once, and never one a run has used", async () => {
    const { mcp, opened } = await server();
    const shared = pool({ spareIdleMs: 10_000 });
    await runCall(shared, mcp.url, "run_a");
    await waitFor("a spare to open", () => opened.length === 2 && shared.spareSessions === 1, { timeoutMs: 5_000 });
    const beforeB = sessionIds(opened);
    await runCall(shared, mcp.url, "run_b");
    await runCall(shared, mcp.url, "run_a");
    await runCall(shared, mcp.url, "run_b");
    const [a1, a2] = sessionsOf(mcp, "run_a");
    const [b1, b2] = sessionsOf(mcp, "run_b");
    // run_b's session was opened before its first call: the spare, not run_a's.
    expect(beforeB).toEqual([a1, b1]);
    expect(a2).toBe(a1);
    expect(b2).toBe(b1);
    // Taking it made another for the run after, which no run had used either.
    await waitFor("the next spare to open", () => opened.length === 3, { timeoutMs: 5_000 });
    const beforeC = sessionIds(opened);
    await runCall(shared, mcp.url, "run_c");
    const [c1] = sessionsOf(mcp, "run_c");
    expect(beforeC).toEqual([a1, b1, c1]);
  });

  it("keeps spares apart by key: a call of other credentials or another namespace opens its own", async () => {
    const { mcp, opened } = await server();
    const shared = pool({ spareIdleMs: 10_000 });
    await runCall(shared, mcp.url, "run_a");
    await waitFor("a spare to open", () => shared.spareSessions === 1 && opened.length === 2, { timeoutMs: 5_000 });
    const [, spare] = sessionIds(opened);
    await runCall(shared, mcp.url, "run_other", {
      spareKey: `other#${mcp.url}`,
      headers: { authorization: "Bearer other" },
    });
    // Its own session, opened for it with its own headers.
    const [other] = sessionsOf(mcp, "run_other");
    expect(other).not.toBe(spare);
    expect(opened.find((o) => o.session === other)?.authorization).toBe("Bearer other");
    // The first key's spare is still there for that key's next run.
    await runCall(shared, mcp.url, "run_b");
    expect(sessionsOf(mcp, "run_b")).toEqual([spare]);
  });

  it("closes a spare nobody took within spareIdleMs, deleting its session at the server", async () => {
    const { mcp, opened } = await server();
    const shared = pool({ spareIdleMs: 300, maxIdleMs: 60_000 });
    await runCall(shared, mcp.url, "run_a");
    await waitFor("a spare to open", () => opened.length === 2, { timeoutMs: 5_000 });
    await waitFor("the spare to be closed", () => mcp.stats.sessionsDeleted === 1 && shared.spareSessions === 0, {
      timeoutMs: 5_000,
    });
    // The run's own session is untouched.
    await runCall(shared, mcp.url, "run_a");
    const [first, second] = sessionsOf(mcp, "run_a");
    expect(second).toBe(first);
  });

  it("keeps no spares unless asked, and none for calls that give no spare key", async () => {
    const { mcp, opened } = await server();
    const plain = pool({});
    await runCall(plain, mcp.url, "run_a");
    const spared = pool({ spareIdleMs: 10_000 });
    await spared.callTool({ url: mcp.url, poolKey: "k", name: "echo", arguments: {}, meta: {}, timeoutMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(opened).toHaveLength(2);
    expect(plain.spareSessions).toBe(0);
    expect(spared.spareSessions).toBe(0);
  });

  it("never hands over a spare that failed to open: the run opens its own and its call goes through", async () => {
    let refuseInitialize = false;
    let initializeAsked = 0;
    const { mcp, opened } = await server({
      onRequest: (info) => {
        if (info.method === "initialize") initializeAsked++;
      },
      intercept: (info) =>
        refuseInitialize && info.method === "initialize" ? { status: 503, body: "starting up" } : undefined,
    });
    const shared = pool({ spareIdleMs: 10_000 });
    await runCall(shared, mcp.url, "run_a");
    refuseInitialize = true;
    // The spare's initialize is refused, and the failed spare is dropped.
    await waitFor("the spare's initialize", () => initializeAsked === 2, { timeoutMs: 5_000 });
    await waitFor("the failed spare to be dropped", () => shared.spareSessions === 0, { timeoutMs: 5_000 });
    refuseInitialize = false;
    const outcome = await runCall(shared, mcp.url, "run_b");
    expect(outcome.isError).toBe(false);
    expect(outcome.resent).toBeUndefined();
    const [b] = sessionsOf(mcp, "run_b");
    expect(b).toBeDefined();
    expect(sessionIds(opened)).toContain(b);
    expect(b).not.toBe(sessionsOf(mcp, "run_a")[0]);
  });

  it("a spare the server forgot (it restarted) costs the call one send on a new session, like a lost session", async () => {
    const { mcp, opened } = await server();
    const shared = pool({ spareIdleMs: 10_000 });
    await runCall(shared, mcp.url, "run_a");
    await waitFor("a spare to open", () => opened.length === 2 && shared.spareSessions === 1, { timeoutMs: 5_000 });
    const [, spare] = sessionIds(opened);
    await mcp.dropSessions();
    const outcome = await runCall(shared, mcp.url, "run_b");
    expect(outcome.isError).toBe(false);
    expect(outcome.resent).toBe(1);
    // The send on the forgotten spare never reached the tool; the one on a session opened after it did.
    const ran = sessionsOf(mcp, "run_b");
    expect(ran).toHaveLength(1);
    expect(ran[0]).not.toBe(spare);
    expect(sessionIds(opened).indexOf(ran[0] ?? "")).toBeGreaterThan(1);
  });

  it("under a guarded policy, never uses a spare whose server's name now answers a refused address", async () => {
    let answers = ["127.0.0.1"];
    const dns = tableResolver({ "flip.spare.test": () => answers });
    const targets = createTargetPolicy({
      guarded: true,
      resolve: dns.resolve,
      trusted: { hosts: [], cidrs: ["127.0.0.1/32"] },
    });
    const { mcp, opened } = await server();
    const url = `http://flip.spare.test:${mcp.port}/mcp`;
    const shared = pool({ spareIdleMs: 10_000, targets });
    await runCall(shared, url, "run_a");
    await waitFor("a spare to open", () => opened.length === 2 && shared.spareSessions === 1, { timeoutMs: 5_000 });
    // The name now answers a private address: the next run is refused, nothing reaches the server.
    answers = ["10.20.30.40"];
    const calls = mcp.calls.length;
    await expect(runCall(shared, url, "run_b")).rejects.toMatchObject({ reason: "targetNotAllowed" });
    expect(mcp.calls).toHaveLength(calls);
    // The name answers loopback again: a run gets through.
    answers = ["127.0.0.1"];
    expect((await runCall(shared, url, "run_c")).isError).toBe(false);
  });

  it("closes its spares with the pool", async () => {
    const { mcp, opened } = await server();
    const shared = createMcpPool({ spareIdleMs: 10_000 });
    await runCall(shared, mcp.url, "run_a");
    await waitFor("a spare to open", () => shared.spareSessions === 1 && opened.length === 2, { timeoutMs: 5_000 });
    await shared.close();
    expect(shared.spareSessions).toBe(0);
    expect(mcp.stats.sessionsDeleted).toBe(2);
  });
});
