/**
 * Interop with a server written with the official Python SDK (test/fixtures/python/mcp_server.py)
 * in each of its streamable HTTP modes — stateful or stateless, SSE or JSON responses — as real
 * deployments run it: a toolset registered with it pins its typed tools, a Rewind run gets their
 * structured results, matching the outputSchemas the SDK derived from Python types, and calls go
 * on when the server is killed and restarted (the SDK answers a lost session with 404).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPythonMcpServer, type PythonMcpServer } from "../helpers/python-mcp.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { callInRun, pinnedTools, schemaMismatch, type PinnedToolView } from "./interop-runs.ts";

let stack: RewindStack;
// Stopped after the stack: with Rewind's connections gone, each server ends at once.
const servers: PythonMcpServer[] = [];

beforeAll(async () => {
  stack = await startRewindStack();
});
afterAll(async () => {
  await stack?.stop();
  await Promise.all(servers.map((server) => server.stop()));
});

const PROFILE = {
  name: "Ada",
  age: 36,
  score: 9.5,
  active: true,
  tags: ["math", "engines"],
  address: { city: "London", postcode: "W1" },
  nickname: null,
};

describe.each([
  { mode: "stateful, SSE responses", stateless: false, jsonResponse: false },
  { mode: "stateful, JSON responses", stateless: false, jsonResponse: true },
  { mode: "stateless, SSE responses", stateless: true, jsonResponse: false },
  { mode: "stateless, JSON responses", stateless: true, jsonResponse: true },
])("Python SDK server, $mode", ({ stateless, jsonResponse }) => {
  let server: PythonMcpServer;
  let toolset: string;
  let tools: PinnedToolView[];

  beforeAll(async () => {
    server = await startPythonMcpServer({ stateless, jsonResponse });
    servers.push(server);
    toolset = await registerToolset(stack, { mcpServers: { py: { url: server.url } } });
    tools = await pinnedTools(stack, toolset, "py");
  });

  const schemaOf = (name: string) => {
    const schema = tools.find((t) => t.name === name)?.outputSchema;
    if (!schema) throw new Error(`py.${name} was pinned without an outputSchema`);
    return schema;
  };

  it("pins every tool, with the outputSchemas the SDK derived from the Python return types", () => {
    expect(tools.map((t) => t.name).sort()).toEqual([
      "add",
      "ask_elicitation",
      "ask_roots",
      "ask_sampling",
      "big_number",
      "big_number_text",
      "counter_increment",
      "profile",
      "sleep",
      "slow_progress",
    ]);
    expect(tools.find((t) => t.name === "add")).toMatchObject({
      inputSchema: {
        type: "object",
        properties: { a: { type: "integer" }, b: { type: "integer" } },
        required: ["a", "b"],
      },
      outputSchema: { type: "object", properties: { result: { type: "integer" } }, required: ["result"] },
    });
    expect(schemaOf("profile")).toMatchObject({
      type: "object",
      required: ["name", "age", "score", "active", "tags", "address"],
      $defs: { Address: { type: "object" } },
    });
    expect(tools.find((t) => t.name === "big_number_text")?.outputSchema).toBeUndefined();
  });

  it("calls add and profile from a run: typed, structured results that match their schemas; a big number as text stays a string", async () => {
    const id = await startRun(stack, {
      toolset,
      script: `import { py } from "rewind:tools";
export default async function main() {
  const sum = await py.add({ a: 2, b: 40 });
  const profile = await py.profile({});
  const [later, big, bigText] = await Promise.all([py.sleep({ ms: 20 }), py.big_number({}), py.big_number_text({})]);
  return { sum, profile, doubled: sum.result * 2, city: profile.address.city, later, big, bigText };
}`,
    });
    const done = await waitForRun(stack, id, 30_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    const result = done.result as Record<string, unknown>;
    expect(result).toEqual({
      sum: { result: 42 },
      profile: PROFILE,
      doubled: 84,
      city: "London",
      later: { result: 20 },
      big: { result: "9007199254740993" },
      bigText: "9007199254740993",
    });
    expect(schemaMismatch(schemaOf("add"), result["sum"])).toBeUndefined();
    expect(schemaMismatch(schemaOf("profile"), result["profile"])).toBeUndefined();
    expect(schemaMismatch(schemaOf("big_number"), result["big"])).toBeUndefined();
  });

  it("calls on after the server restarts on its port, every session lost", async () => {
    const before = await callInRun(stack, toolset, "py", "add", { a: 1, b: 1 });
    expect(before.result).toEqual({ result: 2 });
    await server.restart();
    const after = await callInRun(stack, toolset, "py", "add", { a: 2, b: 2 });
    expect(after.status, `${JSON.stringify(after.error)}\n${server.output()}`).toBe("completed");
    expect(after.result).toEqual({ result: 4 });
  });

  it("calls a tool that reports progress, and gets its result", async () => {
    const id = await startRun(stack, {
      toolset,
      script:
        'import { py } from "rewind:tools";\nexport default async () => py.slow_progress({ steps: 3, delay_ms: 20 });',
    });
    const done = await waitForRun(stack, id, 30_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual({ result: 3 });
  });
});
