/**
 * The client against a server we did not write: the reference `server-everything`, in streamable
 * HTTP mode. Its tools are listed with their schemas, and calls return what a script expects.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpPool, listAllTools, resultValue, type McpPool } from "../../src/mcp/index.ts";
import { startEverythingServer, type EverythingServer } from "../helpers/everything-server.ts";

let server: EverythingServer;
let pool: McpPool;

beforeAll(async () => {
  server = await startEverythingServer();
  pool = createMcpPool();
}, 60_000);

afterAll(async () => {
  await pool?.close();
  await server?.close();
});

const call = (name: string, args: Record<string, unknown>) =>
  pool.callTool({
    url: server.url,
    poolKey: "everything",
    name,
    arguments: args,
    meta: { "codes.rewind/idempotency-key": "run_ev/1" },
    timeoutMs: 10_000,
  });

describe("server-everything", () => {
  it("lists its tools with their schemas", async () => {
    const tools = await listAllTools({ url: server.url });
    const echo = tools.find((t) => t.name === "echo");
    expect(echo).toMatchObject({
      description: "Echoes back the input string",
      inputSchema: { type: "object", properties: { message: { type: "string" } } },
    });
    expect(tools.find((t) => t.name === "get-structured-content")?.outputSchema).toMatchObject({ type: "object" });
  });

  it("echoes, as text a script gets as a string", async () => {
    const outcome = await call("echo", { message: "hello" });
    expect(outcome).toMatchObject({ isError: false, content: [{ type: "text", text: "Echo: hello" }] });
    expect(resultValue(outcome)).toBe("Echo: hello");
  });

  it("returns structured content as the value", async () => {
    const value = resultValue(await call("get-structured-content", { location: "Chicago" }));
    expect(value).toMatchObject({
      temperature: expect.any(Number),
      conditions: expect.any(String),
      humidity: expect.any(Number),
    });
  });

  it("gets invalid arguments back as the tool's own error result, which is not a failed call", async () => {
    const outcome = await call("echo", { message: 42 });
    expect(outcome.isError).toBe(true);
    expect(resultValue(outcome)).toMatch(/Invalid arguments for tool echo/);
  });
});
