/**
 * Tool calls through the connection pool against real MCP servers: what reaches the server
 * (`_meta`, arguments, headers), connection reuse and renewal, and for each way a call can end
 * without a result the reason and whether the outcome is unknown — the facts that retry and
 * at-most-once policies are built on.
 */
import { describe, expect, it } from "vitest";
import { getFreePort } from "../../src/dev/free-port.ts";
import {
  createMcpPool,
  McpCallError,
  resultValue,
  type McpCallRequest,
  type McpPool,
  type McpPoolOptions,
} from "../../src/mcp/index.ts";
import { startMcpServer } from "../helpers/mcp-test-server.ts";
import { perTestCleanup } from "../helpers/per-test-cleanup.ts";
import {
  IDEMPOTENCY_KEY,
  droppingTool,
  echoTool,
  effectCounterTool,
  failingTool,
  manyTools,
  slowTool,
} from "../helpers/mcp-test-tools.ts";
import { waitFor } from "../helpers/wait-for.ts";

const { defer, mcpServer } = perTestCleanup();

function pool(options: McpPoolOptions = {}): McpPool {
  const created = createMcpPool(options);
  defer(() => created.close());
  return created;
}

const call = (on: McpPool, url: string, name: string, extra: Partial<McpCallRequest> = {}) =>
  on.callTool({ url, poolKey: url, name, arguments: {}, meta: {}, timeoutMs: 5_000, ...extra });

async function failure(promise: Promise<unknown>): Promise<McpCallError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpCallError);
  return error as McpCallError;
}

describe("callTool", () => {
  it("sends arguments, _meta and the connection's headers", async () => {
    const server = await mcpServer({ tools: [echoTool()] });
    const meta = {
      [IDEMPOTENCY_KEY]: "run_x/3",
      traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    };
    const outcome = await call(pool(), server.url, "echo", {
      arguments: { message: "hi" },
      meta,
      headers: { authorization: "Bearer abc-123", "x-tenant": "t1" },
    });
    expect(resultValue(outcome)).toEqual({ args: { message: "hi" }, meta });
    expect(server.calls).toHaveLength(1);
    expect(server.calls[0]).toMatchObject({ name: "echo", arguments: { message: "hi" }, meta });
    expect(server.calls[0]?.headers).toMatchObject({ authorization: "Bearer abc-123", "x-tenant": "t1" });
  });

  it("returns a tool's own failure as a result with isError", async () => {
    const server = await mcpServer({ tools: [failingTool("no such repository")] });
    const outcome = await call(pool(), server.url, "fail");
    expect(outcome).toEqual({ kind: "result", isError: true, content: [{ type: "text", text: "no such repository" }] });
  });

  it("returns structuredContent as sent even when it contradicts the listed output schema", async () => {
    const outputSchema = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };
    const server = await mcpServer({
      tools: [
        {
          name: "liar",
          inputSchema: { type: "object" },
          outputSchema,
          handler: async () => ({ content: [], structuredContent: { n: "not a number" } }),
        },
      ],
    });
    const shared = pool();
    // Listing on the same connection first: the SDK's callTool would then validate and throw.
    expect((await shared.listTools(server.url, undefined, server.url)).tools).toHaveLength(1);
    const outcome = await call(shared, server.url, "liar");
    expect(outcome.structuredContent).toEqual({ n: "not a number" });
  });

  it("reports an unknown tool as toolError with the JSON-RPC code, and keeps the connection", async () => {
    const server = await mcpServer({ tools: [echoTool()] });
    const shared = pool();
    const error = await failure(call(shared, server.url, "nope"));
    expect(error).toMatchObject({ reason: "toolError", code: -32602, outcomeUnknown: false });
    expect(error.message).toContain("Unknown tool: nope");
    await call(shared, server.url, "echo");
    expect(server.stats.initializeRequests).toBe(1);
  });

  it("refuses arguments that are not an object without sending anything", async () => {
    const server = await mcpServer({ tools: [echoTool()] });
    const error = await failure(call(pool(), server.url, "echo", { arguments: [1, 2] }));
    expect(error).toMatchObject({ reason: "toolError", outcomeUnknown: false });
    expect(server.calls).toHaveLength(0);
  });
});

describe("connection reuse", () => {
  it("shares one session between sequential and concurrent calls with the same pool key", async () => {
    const { tool, state } = slowTool({ delayMs: 150 });
    const server = await mcpServer({ tools: [tool, echoTool()] });
    const shared = pool();
    await call(shared, server.url, "echo");
    await call(shared, server.url, "echo");
    await Promise.all(Array.from({ length: 5 }, () => call(shared, server.url, "slow")));
    expect(state.maxInFlight).toBe(5);
    expect(server.stats.initializeRequests).toBe(1);
    expect(new Set(server.calls.map((c) => c.sessionId)).size).toBe(1);
  });

  it("opens one session per pool key (credentials)", async () => {
    const server = await mcpServer({ tools: [echoTool()] });
    const shared = pool();
    await call(shared, server.url, "echo", { poolKey: "a", headers: { authorization: "Bearer a-token" } });
    await call(shared, server.url, "echo", { poolKey: "b", headers: { authorization: "Bearer b-token" } });
    expect(server.stats.initializeRequests).toBe(2);
    expect(server.calls.map((c) => c.headers.authorization)).toEqual(["Bearer a-token", "Bearer b-token"]);
  });

  it("opens a new session after the server restarts, and the call runs once", async () => {
    const first = await startMcpServer({ tools: [echoTool()] });
    const shared = pool();
    await call(shared, first.url, "echo");
    await first.close();
    // A restart takes longer than one turn of the event loop: let the client read the closed sockets.
    await new Promise((resolve) => setImmediate(resolve));
    const second = await mcpServer({ tools: [echoTool()], port: first.port });
    await call(shared, second.url, "echo", { meta: { [IDEMPOTENCY_KEY]: "run_r/1" } });
    expect(second.stats.initializeRequests).toBe(1);
    expect(second.calls).toHaveLength(1);
  });

  it("opens a new session after the server forgot the session", async () => {
    const server = await mcpServer({ tools: [echoTool()] });
    const shared = pool();
    await call(shared, server.url, "echo");
    await server.dropSessions();
    await call(shared, server.url, "echo");
    expect(server.stats.initializeRequests).toBe(2);
    expect(server.calls).toHaveLength(2);
  });

  it("opens a session ahead of a call without waiting, and the call uses it", async () => {
    const server = await mcpServer({ tools: [echoTool()] });
    const shared = pool();
    shared.open(server.url, { authorization: "Bearer early" }, "ahead");
    await waitFor("the session to open", () => server.stats.sessionsOpened === 1, { timeoutMs: 5_000 });
    expect(server.calls).toHaveLength(0);
    // Opening again, or a call on the same key, opens nothing more.
    shared.open(server.url, { authorization: "Bearer early" }, "ahead");
    await call(shared, server.url, "echo", { poolKey: "ahead", headers: { authorization: "Bearer early" } });
    expect(server.stats.initializeRequests).toBe(1);
    expect(server.calls.map((c) => c.headers.authorization)).toEqual(["Bearer early"]);
  });

  it("drops a session opened ahead that failed: the call says why, and a later one opens its own", async () => {
    const port = await getFreePort();
    const url = `http://127.0.0.1:${port}/mcp`;
    const shared = pool();
    shared.open(url, undefined, "ahead");
    expect(await failure(call(shared, url, "echo", { poolKey: "ahead" }))).toMatchObject({
      reason: "unreachable",
      outcomeUnknown: false,
    });
    const server = await mcpServer({ tools: [echoTool()], port });
    await call(shared, url, "echo", { poolKey: "ahead" });
    expect(server.calls).toHaveLength(1);
  });

  it("closes idle connections, ending their sessions", async () => {
    const server = await mcpServer({ tools: [echoTool()] });
    const shared = pool({ maxIdleMs: 100 });
    await call(shared, server.url, "echo");
    await waitFor("a session to be deleted", () => server.stats.sessionsDeleted > 0, { timeoutMs: 2_000 });
    expect(server.stats.sessionsDeleted).toBe(1);
    await call(shared, server.url, "echo");
    expect(server.stats.initializeRequests).toBe(2);
  });

  it("closes the least recently used idle connection beyond maxConnections", async () => {
    const server = await mcpServer({ tools: [echoTool()] });
    const shared = pool({ maxConnections: 1 });
    await call(shared, server.url, "echo", { poolKey: "a" });
    await call(shared, server.url, "echo", { poolKey: "b" });
    await waitFor("a session to be deleted", () => server.stats.sessionsDeleted > 0, { timeoutMs: 2_000 });
    expect(server.stats.sessionsDeleted).toBe(1);
  });

  it("lists every page of tools on the pooled connection, as the server has them now", async () => {
    const server = await mcpServer({ tools: manyTools(25), pageSize: 10 });
    const shared = pool();
    expect((await shared.listTools(server.url, undefined, server.url)).tools).toHaveLength(25);
    server.setTools([{ ...echoTool(), inputSchema: { type: "object", properties: { message: { type: "integer" } } } }]);
    await server.dropSessions();
    const [echo] = (await shared.listTools(server.url, undefined, server.url)).tools;
    expect(echo?.inputSchema).toEqual({ type: "object", properties: { message: { type: "integer" } } });
    expect(server.stats.initializeRequests).toBe(2);
  });
});

describe("calls that end without a result", () => {
  it("reports a connection dropped after sending as interrupted, and a retry with the same key runs", async () => {
    const { tool, state } = droppingTool({ dropAttempts: 1 });
    const server = await mcpServer({ tools: [tool] });
    const shared = pool();
    const meta = { [IDEMPOTENCY_KEY]: "run_d/1" };
    const started = Date.now();
    const error = await failure(call(shared, server.url, "flaky", { meta }));
    expect(error).toMatchObject({ reason: "interrupted", outcomeUnknown: true });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(resultValue(await call(shared, server.url, "flaky", { meta }))).toEqual({ attempt: 2 });
    expect(state).toEqual({ drops: 1, answers: 1 });
    expect(server.stats.initializeRequests).toBe(2);
  });

  it("reports a response stream that breaks before the answer as interrupted", async () => {
    const { tool } = droppingTool({ dropAttempts: 1, afterFirstEvent: true });
    const server = await mcpServer({ tools: [tool] });
    const started = Date.now();
    const error = await failure(call(pool(), server.url, "flaky", { meta: { [IDEMPOTENCY_KEY]: "run_s/1" } }));
    expect(error).toMatchObject({ reason: "interrupted", outcomeUnknown: true });
    expect(error.message).toMatch(/stream/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("reports no answer within timeoutMs as timedOut, and tells the server", async () => {
    const { tool, state } = slowTool({ delayMs: 5_000 });
    const server = await mcpServer({ tools: [tool] });
    const started = Date.now();
    const error = await failure(call(pool(), server.url, "slow", { timeoutMs: 300 }));
    expect(error).toMatchObject({ reason: "timedOut", outcomeUnknown: true });
    expect(error.message).toContain("300 ms");
    expect(Date.now() - started).toBeLessThan(1_500);
    await waitFor("the server to be told of the cancel", () => state.cancelled > 0, { timeoutMs: 2_000 });
    expect(state.cancelled).toBe(1);
  });

  it("reports the caller's abort as cancelled, and whether the call had been sent", async () => {
    const { tool } = slowTool({ delayMs: 5_000 });
    const server = await mcpServer({ tools: [tool] });
    const shared = pool();
    const during = await failure(call(shared, server.url, "slow", { signal: AbortSignal.timeout(200) }));
    expect(during).toMatchObject({ reason: "cancelled", outcomeUnknown: true });
    const before = await failure(call(shared, server.url, "slow", { signal: AbortSignal.abort() }));
    expect(before).toMatchObject({ reason: "cancelled", outcomeUnknown: false });
    expect(server.calls).toHaveLength(1);
  });

  it("reports a port where nothing listens as unreachable: nothing was sent", async () => {
    const url = `http://127.0.0.1:${await getFreePort()}/mcp`;
    expect(await failure(call(pool(), url, "echo"))).toMatchObject({ reason: "unreachable", outcomeUnknown: false });
  });

  it("reports 401 as unauthorized without quoting the credentials", async () => {
    const server = await mcpServer({ tools: [echoTool()], requiredAuthorization: "Bearer right-token-42" });
    const error = await failure(
      call(pool(), server.url, "echo", { headers: { authorization: "Bearer expired-token-17" } }),
    );
    expect(error).toMatchObject({ reason: "unauthorized", status: 401, outcomeUnknown: false });
    expect(error.message).not.toContain("expired-token-17");
  });

  it("reports 401 on the call of an open session as unauthorized", async () => {
    let expired = false;
    const server = await mcpServer({
      tools: [echoTool()],
      intercept: (info) =>
        expired && info.method === "tools/call"
          ? { status: 401, headers: { "www-authenticate": "Bearer" } }
          : undefined,
    });
    const shared = pool();
    await call(shared, server.url, "echo");
    expired = true;
    expect(await failure(call(shared, server.url, "echo"))).toMatchObject({
      reason: "unauthorized",
      status: 401,
      outcomeUnknown: false,
    });
  });

  it("reports 403 insufficient_scope as forbidden", async () => {
    const server = await mcpServer({
      tools: [echoTool()],
      intercept: (info) =>
        info.method === "tools/call"
          ? { status: 403, headers: { "www-authenticate": 'Bearer error="insufficient_scope"' } }
          : undefined,
    });
    expect(await failure(call(pool(), server.url, "echo"))).toMatchObject({
      reason: "forbidden",
      status: 403,
      insufficientScope: true,
      outcomeUnknown: false,
    });
  });

  it("reports a 5xx answer to the call as interrupted: the server may have run it", async () => {
    const server = await mcpServer({
      tools: [echoTool()],
      intercept: (info) => (info.method === "tools/call" ? { status: 502, body: "bad gateway" } : undefined),
    });
    expect(await failure(call(pool(), server.url, "echo"))).toMatchObject({
      reason: "interrupted",
      status: 502,
      outcomeUnknown: true,
    });
  });

  it("ends calls in flight as interrupted when the pool closes, and refuses new ones", async () => {
    const { tool } = slowTool({ delayMs: 5_000 });
    const server = await mcpServer({ tools: [tool] });
    const shared = createMcpPool();
    const pending = failure(call(shared, server.url, "slow"));
    await waitFor("the call at the server", () => server.calls.length > 0);
    expect(server.calls).toHaveLength(1);
    await shared.close();
    expect(await pending).toMatchObject({ reason: "interrupted", outcomeUnknown: true });
    expect(await failure(call(shared, server.url, "slow"))).toMatchObject({
      reason: "unreachable",
      outcomeUnknown: false,
    });
  });
});

describe("test server helpers", () => {
  it("counts one effect per idempotency key", async () => {
    const { tool, state } = effectCounterTool();
    const server = await mcpServer({ tools: [tool] });
    const shared = pool();
    for (const key of ["run_e/1", "run_e/1", "run_e/2"])
      await call(shared, server.url, "record_effect", { meta: { [IDEMPOTENCY_KEY]: key } });
    expect(state.total).toBe(2);
    expect(Object.fromEntries(state.effects)).toEqual({ "run_e/1": 1, "run_e/2": 1 });
  });
});
