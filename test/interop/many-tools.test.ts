/**
 * A server with 1,000 tools, listed 100 per page (the SDK's test server, test/helpers/
 * mcp-test-server.ts): registration follows every cursor and pins all 1,000, and a run calls one
 * of them by name — the size of a large company's internal gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { manyTools } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset } from "../helpers/toolset.ts";
import { callInRun, pinnedTools } from "./interop-runs.ts";

const COUNT = 1_000;
const PAGE_SIZE = 100;

let stack: RewindStack;
let server: TestMcpServer;
const listRequests: unknown[] = [];

beforeAll(async () => {
  stack = await startRewindStack();
  server = await startMcpServer({
    tools: manyTools(COUNT),
    pageSize: PAGE_SIZE,
    onRequest: (info) => {
      if (info.method === "tools/list") listRequests.push(info.body);
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

describe("a server with 1,000 tools", () => {
  let toolset: string;

  it("pins all 1,000 tools, reading every page", async () => {
    toolset = await registerToolset(stack, { mcpServers: { big: { url: server.url } } });
    const tools = await pinnedTools(stack, toolset, "big");
    expect(tools).toHaveLength(COUNT);
    expect(new Set(tools.map((t) => t.name))).toEqual(new Set(manyTools(COUNT).map((t) => t.name)));
    expect(listRequests).toHaveLength(COUNT / PAGE_SIZE);
  });

  it("calls one of them from a run", async () => {
    const done = await callInRun(stack, toolset, "big", "tool_737", {});
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    // The tool answers the text "737": a number in a text block stays the string a script is told it gets.
    expect(done.result).toBe("737");
    expect(server.calls.map((c) => c.name)).toEqual(["tool_737"]);
  });
});
