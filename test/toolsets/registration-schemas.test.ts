/**
 * Tools' schemas end to end, against real MCP servers and a real worker: a tool whose schema
 * can't be used is left out of the toolset (said in the registration response) while the rest
 * is pinned, a draft-04 tool validates its calls with draft-04 rules, tools of two servers and
 * of one server that share a `$id` each validate against their own schema, and `tools:
 * { include } | { exclude }` picks what is pinned.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer, type TestToolDefinition } from "../helpers/mcp-test-server.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { startRun } from "../helpers/toolset.ts";

let stack: RewindStack;
let svc: TestMcpServer;
let other: TestMcpServer;

const SHARED_ID = "https://example.com/schemas/args.json";
const answer =
  (name: string): TestToolDefinition["handler"] =>
  async (args) => ({ content: [{ type: "text", text: JSON.stringify({ tool: name, args }) }] });
const tool = (name: string, inputSchema: Record<string, unknown>): TestToolDefinition => ({
  name,
  inputSchema,
  handler: answer(name),
});

const legacy = tool("legacy", {
  $schema: "http://json-schema.org/draft-04/schema#",
  id: "urn:example:legacy",
  type: "object",
  properties: { n: { type: "number", maximum: 5, exclusiveMaximum: true } },
  required: ["n"],
});
const broken = tool("broken", {
  type: "object",
  properties: { spec: { $ref: "https://example.com/schemas/spec.json" } },
});
const sharedA = tool("shared_a", {
  $id: SHARED_ID,
  type: "object",
  properties: { a: { type: "string" } },
  required: ["a"],
});
const sharedB = tool("shared_b", {
  $id: SHARED_ID,
  type: "object",
  properties: { b: { type: "number" } },
  required: ["b"],
});
const sharedC = tool("shared", {
  $id: SHARED_ID,
  type: "object",
  properties: { c: { type: "boolean" } },
  required: ["c"],
});
const ping = tool("ping", { type: "object" });

beforeAll(async () => {
  stack = await startRewindStack();
  svc = await startMcpServer({ tools: [legacy, broken, sharedA, sharedB, ping] });
  other = await startMcpServer({ tools: [sharedC] });
});
afterAll(async () => {
  await Promise.all([svc?.close(), other?.close()]);
  await stack?.stop();
});

const register = (body: unknown) => stack.request("POST", "/v1/toolsets", body);
const pinnedNames = (body: Record<string, unknown>, server: string) =>
  (body["document"] as { mcpServers: Record<string, { tools: { name: string }[] }> }).mcpServers[server]?.tools.map(
    (t) => t.name,
  );

async function run(toolset: string, body: string) {
  const id = await startRun(stack, {
    toolset,
    script: `import { svc, other, ToolError } from "rewind:tools";\nconst attempt = async (call: () => Promise<unknown>) => { try { return { ok: await call() }; } catch (e) { return e instanceof ToolError ? { code: e.code, message: e.message } : { other: String(e) }; } };\nexport default async function main() {\n${body}\n}`,
  });
  return waitForRun(stack, id, 60_000);
}

describe("a toolset with a tool whose schema can't be used", () => {
  let toolset: string;

  it("registers, leaving that tool out with its reason and pinning the rest", async () => {
    const { status, body } = await register({
      mcpServers: { svc: { url: svc.url }, other: { url: other.url } },
      policies: { "svc.broken": { approval: true } },
    });
    expect(status, JSON.stringify(body)).toBe(201);
    toolset = String(body.id);
    expect(pinnedNames(body, "svc")).toEqual(["legacy", "ping", "shared_a", "shared_b"]);
    expect(body["omittedTools"]).toEqual([
      {
        server: "svc",
        tool: "broken",
        schema: "inputSchema",
        reason: "unresolvableRef",
        message: expect.stringMatching(
          /^input schema can't be used: can't resolve reference https:\/\/example.com\/schemas\/spec.json/,
        ),
      },
    ]);
    const fetched = await stack.request("GET", `/v1/toolsets/${toolset}`);
    expect(fetched.body).toEqual({ id: toolset, document: body["document"] });
    expect((body["document"] as { policies: unknown }).policies).toEqual({});
  });

  it("validates the draft-04 tool's calls with draft-04 rules, and each $id twin with its own schema", async () => {
    const done = await run(
      toolset,
      `  return [
    await attempt(() => svc.legacy({ n: 4 })),
    await attempt(() => svc.legacy({ n: 5 })),
    await attempt(() => svc.shared_a({ a: "x" })),
    await attempt(() => svc.shared_a({ b: 1 } as never)),
    await attempt(() => svc.shared_b({ b: 1 })),
    await attempt(() => svc.shared_b({ a: "x" } as never)),
    await attempt(() => other.shared({ c: true })),
    await attempt(() => other.shared({ a: "x" } as never)),
  ];`,
    );
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    const invalid = (message: RegExp) => ({ code: "invalidArguments", message: expect.stringMatching(message) });
    expect(done.result).toEqual([
      { ok: { tool: "legacy", args: { n: 4 } } },
      invalid(/^svc\.legacy: arguments\/n must be < 5$/),
      { ok: { tool: "shared_a", args: { a: "x" } } },
      invalid(/^svc\.shared_a: arguments must have required property 'a'/),
      { ok: { tool: "shared_b", args: { b: 1 } } },
      invalid(/^svc\.shared_b: arguments must have required property 'b'/),
      { ok: { tool: "shared", args: { c: true } } },
      invalid(/^other\.shared: arguments must have required property 'c'/),
    ]);
    expect(svc.calls.filter((c) => c.name === "legacy").map((c) => c.arguments)).toEqual([{ n: 4 }]);
  });

  it("refuses a run calling the left-out tool at type-check, naming it", async () => {
    const { status, body } = await stack.request("POST", "/v1/runs", {
      toolset,
      script: 'import { svc } from "rewind:tools";\nexport default async () => svc.broken({});',
    });
    expect(status).toBe(422);
    expect(body.error?.code).toBe("typeCheckFailed");
    expect(body.error?.details).toEqual([
      expect.objectContaining({ line: 2, message: expect.stringMatching(/Property 'broken' does not exist on type/) }),
    ]);
  });
});

describe("tools: { include } | { exclude }", () => {
  it("include pins only the tools named; a run can't call the others", async () => {
    const { status, body } = await register({
      mcpServers: { svc: { url: svc.url, tools: { include: ["ping", "legacy"] } } },
    });
    expect(status, JSON.stringify(body)).toBe(201);
    expect(pinnedNames(body, "svc")).toEqual(["legacy", "ping"]);
    expect(body["omittedTools"]).toEqual([]);
    const refused = await stack.request("POST", "/v1/runs", {
      toolset: body.id,
      script: 'import { svc } from "rewind:tools";\nexport default async () => svc.shared_a({ a: "x" });',
    });
    expect(refused.body.error?.details).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/Property 'shared_a' does not exist/) }),
    ]);
  });

  it("exclude pins every tool but those named, and an excluded broken tool is not reported", async () => {
    const { status, body } = await register({
      mcpServers: { svc: { url: svc.url, tools: { exclude: ["broken", "shared_b"] } } },
    });
    expect(status, JSON.stringify(body)).toBe(201);
    expect(pinnedNames(body, "svc")).toEqual(["legacy", "ping", "shared_a"]);
    expect(body["omittedTools"]).toEqual([]);
  });

  it("refuses include names the server does not list with 422 naming them, and a policy on a filtered-out tool with 400", async () => {
    const unknown = await register({ mcpServers: { svc: { url: svc.url, tools: { include: ["ping", "pong"] } } } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error).toMatchObject({
      code: "toolsetRejected",
      message: 'MCP server "svc" does not list the tool "pong" named in tools.include',
      details: { reason: "unknownTools", tools: ["pong"] },
    });
    const policy = await register({
      mcpServers: { svc: { url: svc.url, tools: { exclude: ["ping"] } } },
      policies: { "svc.ping": { approval: true } },
    });
    expect(policy.status).toBe(400);
    expect(policy.body.error?.message).toBe(
      'policies: "svc.ping" is not a tool of this toolset: mcpServers.svc.tools.exclude leaves it out',
    );
    const both = await register({
      mcpServers: { svc: { url: svc.url, tools: { include: ["ping"], exclude: ["legacy"] } } },
    });
    expect(both.status).toBe(400);
  });
});
