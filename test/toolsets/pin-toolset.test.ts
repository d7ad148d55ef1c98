/**
 * Pinning a registration request, with the servers' listings given as data: a tool whose
 * schema can't be used is left out with its reason (the rest of the server is pinned), a host
 * tool's is refused, and `tools: { include } | { exclude }` decides what is pinned at all.
 */
import { describe, expect, it } from "vitest";
import type { ListedTool } from "../../src/toolsets/pin-tool.ts";
import { pinToolset } from "../../src/toolsets/pin-toolset.ts";
import { RegistrationError } from "../../src/toolsets/registration-error.ts";
import type { RegisterToolsetBody } from "../../src/contract/registration-request.ts";
import { toolsetId } from "../../src/storage/toolset-id.ts";

const URL_A = "http://127.0.0.1:1/a";
const URL_B = "http://127.0.0.1:1/b";
const object = { type: "object" };
const listings: Record<string, ListedTool[]> = {
  [URL_A]: [
    { name: "search", inputSchema: object },
    {
      name: "legacy",
      inputSchema: {
        $schema: "http://json-schema.org/draft-04/schema#",
        type: "object",
        properties: { n: { type: "number", maximum: 5, exclusiveMaximum: true } },
      },
    },
    { name: "remote", inputSchema: { type: "object", properties: { a: { $ref: "https://example.com/a.json" } } } },
    { name: "typo", inputSchema: { type: "object", properties: { a: { type: "strin" } } } },
    { name: "odd_output", inputSchema: object, outputSchema: { $schema: "http://json-schema.org/draft-03/schema#" } },
    { name: "not_schema", inputSchema: "object" },
  ],
  [URL_B]: [
    { name: "ping", inputSchema: object },
    { name: "delete_all", inputSchema: object },
  ],
};
const deps = {
  listTools: async (url: string) => listings[url] ?? [],
  loadBase: async () => undefined,
};
const pin = (request: RegisterToolsetBody) => pinToolset(request, deps);
const names = (tools: { name: string }[] | undefined) => tools?.map((t) => t.name);

async function refusal(request: RegisterToolsetBody): Promise<RegistrationError> {
  const error = await pin(request).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RegistrationError);
  return error as RegistrationError;
}

describe("tools whose schemas can't be used", () => {
  it("are left out with their reason, and the rest of the server is pinned", async () => {
    const { document, omittedTools } = await pin({ mcpServers: { a: { url: URL_A } } });
    expect(names(document.mcpServers["a"]?.tools)).toEqual(["legacy", "search"]);
    expect(omittedTools).toEqual([
      {
        server: "a",
        tool: "not_schema",
        schema: "inputSchema",
        reason: "notASchema",
        message: expect.stringMatching(/^input schema is not a JSON Schema/),
      },
      {
        server: "a",
        tool: "odd_output",
        schema: "outputSchema",
        reason: "unsupportedDialect",
        message: expect.stringMatching(/^output schema can't be used: unsupported \$schema/),
      },
      {
        server: "a",
        tool: "remote",
        schema: "inputSchema",
        reason: "unresolvableRef",
        message: expect.stringMatching(/can't resolve reference https:\/\/example.com\/a.json/),
      },
      {
        server: "a",
        tool: "typo",
        schema: "inputSchema",
        reason: "invalidSchema",
        message: expect.stringMatching(/\/properties\/a\/type/),
      },
    ]);
  });

  it("keep the id a digest of what is pinned: the same as a server that never listed them", async () => {
    const { document } = await pin({ mcpServers: { a: { url: URL_A } } });
    const clean = await pinToolset(
      { mcpServers: { a: { url: URL_A } } },
      { ...deps, listTools: async () => listings[URL_A]?.filter((t) => ["search", "legacy"].includes(t.name)) ?? [] },
    );
    expect(toolsetId(document)).toBe(toolsetId(clean.document));
  });

  it("lose their policies, since they are not in the toolset", async () => {
    const { document } = await pin({
      mcpServers: { a: { url: URL_A } },
      policies: { "a.remote": { approval: true }, "a.search": { approval: true } },
    });
    expect(document.policies).toEqual({ "a.search": { approval: true } });
  });

  it("refuse a host tool, which the harness wrote, with 422 naming it", async () => {
    const error = await refusal({
      hostTools: { harness: { taskQueue: "q", tools: { ask: { inputSchema: { $ref: "#/definitions/missing" } } } } },
    });
    expect(error.status).toBe(422);
    expect(error.message).toMatch(/host-tool group "harness": tool "ask" input schema can't be used/);
    expect(error.details).toMatchObject({ group: "harness", tool: "ask", reason: "unresolvableRef" });
  });
});

describe("tools: { include } | { exclude }", () => {
  it("include pins only the tools named", async () => {
    const { document, omittedTools } = await pin({
      mcpServers: { a: { url: URL_A, tools: { include: ["search", "remote"] } }, b: { url: URL_B } },
    });
    expect(names(document.mcpServers["a"]?.tools)).toEqual(["search"]);
    expect(names(document.mcpServers["b"]?.tools)).toEqual(["delete_all", "ping"]);
    expect(omittedTools.map((t) => t.tool)).toEqual(["remote"]);
  });

  it("exclude pins every tool but those named, and ignores names the server does not list", async () => {
    const { document, omittedTools } = await pin({
      mcpServers: { b: { url: URL_B, tools: { exclude: ["delete_all", "gone_already"] } } },
    });
    expect(names(document.mcpServers["b"]?.tools)).toEqual(["ping"]);
    expect(omittedTools).toEqual([]);
  });

  it("an excluded tool is not checked, so not omitted either", async () => {
    const { omittedTools } = await pin({
      mcpServers: { a: { url: URL_A, tools: { exclude: ["remote", "typo", "odd_output", "not_schema"] } } },
    });
    expect(omittedTools).toEqual([]);
  });

  it("refuses include names the server does not list, naming them", async () => {
    const error = await refusal({ mcpServers: { b: { url: URL_B, tools: { include: ["ping", "pong", "pang"] } } } });
    expect(error.status).toBe(422);
    expect(error.message).toBe('MCP server "b" does not list the tools "pong", "pang" named in tools.include');
    expect(error.details).toMatchObject({ server: "b", reason: "unknownTools", tools: ["pong", "pang"] });
  });

  it("refuses a policy naming a tool the selection left out, saying so", async () => {
    const excluded = await refusal({
      mcpServers: { b: { url: URL_B, tools: { exclude: ["delete_all"] } } },
      policies: { "b.delete_all": { approval: true } },
    });
    expect(excluded.status).toBe(400);
    expect(excluded.message).toBe(
      'policies: "b.delete_all" is not a tool of this toolset: mcpServers.b.tools.exclude leaves it out',
    );
    const notIncluded = await refusal({
      mcpServers: { b: { url: URL_B, tools: { include: ["ping"] } } },
      policies: { "b.delete_all": { approval: true } },
    });
    expect(notIncluded.message).toMatch(/mcpServers\.b\.tools\.include leaves it out/);
  });
});
