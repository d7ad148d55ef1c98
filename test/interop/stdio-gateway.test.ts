/**
 * Interop with a stdio server reached through `supergateway` (stdio → streamable HTTP), the way
 * stdio-only servers are put on the network: the reference server-everything in stdio mode, one
 * child per session behind the gateway. A toolset registers through the bridge and a run calls
 * `echo` across it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";
import { startStdioGateway, type StdioGateway } from "../helpers/stdio-gateway.ts";
import { registerToolset } from "../helpers/toolset.ts";
import { callInRun, pinnedTools } from "./interop-runs.ts";

let stack: RewindStack;
let gateway: StdioGateway;
let toolset: string;

beforeAll(async () => {
  [stack, gateway] = await Promise.all([startRewindStack(), startStdioGateway()]);
  toolset = await registerToolset(stack, { mcpServers: { bridged: { url: gateway.url } } });
});
afterAll(async () => {
  await stack?.stop();
  await gateway?.stop();
});

describe("a stdio server behind supergateway", () => {
  it("registers through the gateway: the stdio server's tools are pinned", async () => {
    const tools = await pinnedTools(stack, toolset, "bridged");
    expect(tools.find((t) => t.name === "echo")).toMatchObject({
      inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
    });
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["get-sum", "get-structured-content"]));
  });

  it("calls echo from a run, across the bridge", async () => {
    const done = await callInRun(stack, toolset, "bridged", "echo", { message: "through stdio" });
    expect(done.status, `${JSON.stringify(done.error)}\n${gateway.output()}`).toBe("completed");
    expect(done.result).toBe("Echo: through stdio");
  });
});
