/**
 * Listing an MCP server's tools, as registration does: every page, schemas exactly as sent, and
 * for each way a server can be wrong a reason the API can report and a message that names the
 * server without quoting credentials.
 */
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { getFreePort } from "../../src/dev/free-port.ts";
import { listAllTools, McpConnectError } from "../../src/mcp/index.ts";
import { perTestCleanup } from "../helpers/per-test-cleanup.ts";
import { echoTool, manyTools } from "../helpers/mcp-test-tools.ts";

const { defer, mcpServer } = perTestCleanup();

/** A plain HTTP server on loopback that is not an MCP server. */
async function httpServer(listener: RequestListener): Promise<string> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  defer(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

async function failure(promise: Promise<unknown>): Promise<McpConnectError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpConnectError);
  return error as McpConnectError;
}

describe("listAllTools", () => {
  it("follows nextCursor through every page and ends the session", async () => {
    const methods: string[] = [];
    const server = await mcpServer({
      tools: manyTools(25),
      pageSize: 10,
      onRequest: (info) => methods.push(info.method),
    });
    const tools = await listAllTools({ url: server.url });
    expect(tools.map((t) => t.name)).toEqual(manyTools(25).map((t) => t.name));
    expect(methods.filter((m) => m === "tools/list")).toHaveLength(3);
    expect(server.stats.initializeRequests).toBe(1);
    expect(server.stats.sessionsDeleted).toBe(1);
  });

  it("keeps schemas, title and annotations exactly as the server sent them, even unusual ones", async () => {
    const inputSchema = {
      type: "object",
      properties: { repo: { type: "string", pattern: "^[a-z]+/[a-z]+$" }, state: { enum: ["open", "closed"] } },
      required: ["repo"],
      additionalProperties: false,
      $defs: { unused: { type: "integer" } },
    };
    const outputSchema = { type: "object", properties: { count: { type: "integer" } } };
    const server = await mcpServer({
      tools: [
        {
          ...echoTool("list_issues"),
          title: "List issues",
          description: "List the issues.",
          inputSchema,
          outputSchema,
          annotations: { readOnlyHint: true, custom: 1 },
        },
        // Not `type: "object"` at the root: the SDK's own schema would refuse the whole page.
        { ...echoTool("odd"), inputSchema: { anyOf: [{ type: "object" }] } },
      ],
    });
    const [listIssues, odd] = await listAllTools({ url: server.url });
    expect(listIssues).toEqual({
      name: "list_issues",
      title: "List issues",
      description: "List the issues.",
      inputSchema,
      outputSchema,
      annotations: { readOnlyHint: true, custom: 1 },
    });
    expect(odd?.inputSchema).toEqual({ anyOf: [{ type: "object" }] });
  });

  it("sends the given headers on every request", async () => {
    const authorizations: (string | undefined)[] = [];
    const server = await mcpServer({
      tools: [echoTool()],
      requiredAuthorization: "Bearer good-token-1234",
      onRequest: (info) => authorizations.push(info.headers.authorization),
    });
    await expect(
      listAllTools({ url: server.url, headers: { authorization: "Bearer good-token-1234" } }),
    ).resolves.toHaveLength(1);
    expect(new Set(authorizations)).toEqual(new Set(["Bearer good-token-1234"]));
  });

  it("reports 401 as unauthorized, naming the server but not the credentials", async () => {
    const server = await mcpServer({ tools: [echoTool()], requiredAuthorization: "Bearer good-token-1234" });
    const error = await failure(
      listAllTools({ url: server.url, headers: { authorization: "Bearer wrong-secret-9876" } }),
    );
    expect(error).toMatchObject({ reason: "unauthorized", status: 401, url: server.url });
    expect(error.message).toContain(server.url);
    expect(error.message).not.toContain("wrong-secret-9876");
  });

  it("reports 403 as forbidden and says when the scope was insufficient", async () => {
    const server = await mcpServer({
      tools: [echoTool()],
      intercept: () => ({
        status: 403,
        headers: { "www-authenticate": 'Bearer error="insufficient_scope", scope="repo"' },
      }),
    });
    const error = await failure(listAllTools({ url: server.url }));
    expect(error).toMatchObject({ reason: "forbidden", status: 403, insufficientScope: true });
  });

  it("reports a port where nothing listens as unreachable", async () => {
    const url = `http://127.0.0.1:${await getFreePort()}/mcp`;
    const error = await failure(listAllTools({ url }));
    expect(error.reason).toBe("unreachable");
    expect(error.message).toContain(url);
  });

  it("reports an invalid URL as unreachable", async () => {
    expect((await failure(listAllTools({ url: "not a url" }))).reason).toBe("unreachable");
    expect((await failure(listAllTools({ url: "ftp://127.0.0.1/mcp" }))).reason).toBe("unreachable");
  });

  it.each([
    ["a 404", 404, "text/plain", "Not Found"],
    ["an HTML page", 200, "text/html", "<!doctype html><title>Welcome</title>"],
    ["JSON that is not JSON-RPC", 200, "application/json", '{"hello":"world"}'],
  ])("reports %s as notMcp", async (_what, status, contentType, body) => {
    const url = await httpServer((_req, res) => {
      res.writeHead(status, { "content-type": contentType });
      res.end(body);
    });
    expect((await failure(listAllTools({ url }))).reason).toBe("notMcp");
  });

  it("reports a server that never answers as timedOut within the bound", async () => {
    const url = await httpServer(() => undefined);
    const started = Date.now();
    const error = await failure(listAllTools({ url, timeoutMs: 300 }));
    expect(error.reason).toBe("timedOut");
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("stops when the caller's signal aborts", async () => {
    const url = await httpServer(() => undefined);
    const error = await failure(listAllTools({ url, timeoutMs: 5_000, signal: AbortSignal.timeout(100) }));
    expect(error.reason).toBe("cancelled");
  });

  it("never puts a URL's query or userinfo in messages", async () => {
    const port = await getFreePort();
    const error = await failure(
      listAllTools({ url: `http://user:pass-secret@127.0.0.1:${port}/mcp?token=query-secret` }),
    );
    expect(error.message).not.toMatch(/pass-secret|query-secret/);
    expect(error.url).toBe(`http://127.0.0.1:${port}/mcp`);
  });
});
