/**
 * The MCP layer under the outbound target policy, against real MCP servers on loopback: a session
 * to a trusted name works and stays pinned to what its one lookup answered; a refused server or
 * redirect is `targetNotAllowed` for listings and calls alike — not sent, not an unreachable
 * server, whatever listens there — and the pool retires the connection so nothing is reused.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createTargetPolicy } from "../../src/http-tool/index.ts";
import { createMcpPool, listAllTools, McpCallError, McpConnectError, type McpPool } from "../../src/mcp/index.ts";
import { tableResolver } from "../helpers/http-loopback.ts";
import { startMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

let answers: string[] = [];
const dns = tableResolver({
  "mcp.trusted.test": ["127.0.0.1"],
  "flip.test": () => answers,
  "hop.trusted.test": ["127.0.0.1"],
});
const targets = createTargetPolicy({
  guarded: true,
  resolve: dns.resolve,
  trusted: { hosts: ["mcp.trusted.test", "hop.trusted.test"], cidrs: ["127.0.0.1/32"] },
});

function pool(): McpPool {
  const created = createMcpPool({ targets });
  cleanups.push(() => created.close());
  return created;
}

async function server() {
  const started = await startMcpServer({ tools: [echoTool()] });
  cleanups.push(() => started.close());
  return started;
}

async function thrown(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (e: unknown) => e,
  );
}

describe("MCP under the outbound target policy", () => {
  it("calls a trusted server and keeps its session pinned while DNS changes", async () => {
    const mcp = await server();
    answers = ["127.0.0.1"];
    const onPool = pool();
    const url = `http://flip.test:${mcp.port}/mcp`;
    const first = await onPool.callTool({
      url,
      poolKey: "run-1",
      name: "echo",
      arguments: { message: "a" },
      meta: {},
      timeoutMs: 5_000,
    });
    expect(first.isError).toBe(false);
    answers = ["10.0.0.9"];
    const second = await onPool.callTool({
      url,
      poolKey: "run-1",
      name: "echo",
      arguments: { message: "b" },
      meta: {},
      timeoutMs: 5_000,
    });
    expect(second.isError).toBe(false);
    expect(mcp.calls.map((c) => c.arguments)).toEqual([{ message: "a" }, { message: "b" }]);

    // Another run's session looks the name up again and is refused before anything is sent.
    const error = await thrown(
      onPool.callTool({ url, poolKey: "run-2", name: "echo", arguments: { message: "c" }, meta: {}, timeoutMs: 5_000 }),
    );
    expect(error).toBeInstanceOf(McpCallError);
    expect(error).toMatchObject({ reason: "targetNotAllowed", outcomeUnknown: false });
    const listing = await thrown(onPool.listTools(url, undefined, "run-3"));
    expect(listing).toBeInstanceOf(McpConnectError);
    expect(listing).toMatchObject({ reason: "targetNotAllowed" });
    expect(mcp.calls).toHaveLength(2);
  });

  it("refuses a redirect to an address it does not allow, for a listing and a call", async () => {
    const counter = { requests: 0 };
    const target = http.createServer((req, res) => {
      counter.requests++;
      res.end();
    });
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.2", resolve));
    const redirector = http.createServer((req, res) => {
      req.resume();
      res.writeHead(307, { location: `http://127.0.0.2:${(target.address() as AddressInfo).port}/mcp` }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
    cleanups.push(async () => {
      await new Promise((resolve) => target.close(resolve));
      await new Promise((resolve) => redirector.close(resolve));
    });
    const url = `http://hop.trusted.test:${(redirector.address() as AddressInfo).port}/mcp`;
    const listed = await thrown(listAllTools({ url, targets, timeoutMs: 5_000 }));
    expect(listed).toMatchObject({
      reason: "targetNotAllowed",
      message: expect.stringMatching(/^http:\/\/127\.0\.0\.2:\d+ is not an allowed target/) as unknown,
    });
    const called = await thrown(
      pool().callTool({ url, poolKey: "run-1", name: "echo", arguments: {}, meta: {}, timeoutMs: 5_000 }),
    );
    expect(called).toMatchObject({ reason: "targetNotAllowed", outcomeUnknown: false });
    expect(counter.requests).toBe(0);
  });

  it("lists a trusted host's tools through the pinned session", async () => {
    const mcp = await server();
    const tools = await listAllTools({ url: `http://mcp.trusted.test:${mcp.port}/mcp`, targets, timeoutMs: 5_000 });
    expect(tools.map((t) => t.name)).toEqual(["echo"]);
  });
});
