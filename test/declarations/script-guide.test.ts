/**
 * The guide to writing a script must hold for what Rewind runs: its code snippets, put together
 * as written, type-check against the declarations; the built-ins and ToolError codes it names
 * exist; and it stays short, since a model reads it on every prompt.
 */
import { describe, expect, it } from "vitest";
import { createTypeChecker, renderDts, SCRIPT_GUIDE, withScriptGuide } from "../../src/declarations/index.ts";
import { TOOL_ERROR_CODES } from "../../src/shared/index.ts";
import { EMPTY_TOOLSET, type PinnedToolset } from "../../src/shared/toolset.ts";

/** A toolset with the `g.get` tool the guide's snippets call. */
const toolset: PinnedToolset = {
  ...EMPTY_TOOLSET,
  mcpServers: {
    g: {
      url: "http://127.0.0.1:9/mcp",
      tools: [
        {
          name: "get",
          description: "Get an item.",
          inputSchema: { type: "object", properties: { id: { type: "number" } }, required: ["id"] },
          outputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        },
      ],
    },
  },
};

const snippets = [...SCRIPT_GUIDE.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? "");

/** A script made of the guide's own snippets, with `…` filled in. */
function scriptFromGuide(): string {
  const main = snippets.find((s) => s.startsWith("export default async function main("));
  const statements = snippets.filter((s) => s.startsWith("const ") || s.startsWith("await "));
  const handler = snippets.find((s) => s.startsWith("catch ("));
  expect(main).toBeDefined();
  expect(statements.length).toBeGreaterThanOrEqual(4);
  expect(handler).toBeDefined();
  const body = [
    ...statements.map((s) => `${s.replace("<T>", "<{ ok: boolean }>").replace(/;?$/, ";")}`),
    `try { await g.get({ id: input.id }); } ${(handler ?? "").replace("{ … }", "{ console.log(e.tool, e.seq); }")}`,
    "return { a: a.name, b: b.name, url, at: Date.now(), pick: Math.random() };",
  ].join("\n  ");
  const header = 'import { g, sleep, waitForSignal, webhook, ToolError } from "rewind:tools";\n';
  return `${header}${(main ?? "").replace("{ … }", "{ id: number }").replace("{ … }", `{\n  ${body}\n}`)}\n`;
}

describe("the guide to writing a script", () => {
  it("has snippets that type-check, as written, against the declarations", () => {
    const source = scriptFromGuide();
    const diagnostics = createTypeChecker().check({
      source,
      declarations: renderDts(toolset),
      declarationsKey: "guide-fixture",
    });
    expect(diagnostics, source).toEqual([]);
  });

  it("names only built-ins the declarations export and ToolError codes that exist", () => {
    const dts = renderDts({ ...toolset, http: { allowedHosts: [] } });
    for (const name of ["sleep", "waitForSignal", "webhook", "ToolError"]) {
      expect(SCRIPT_GUIDE).toContain(name);
      expect(dts).toMatch(new RegExp(`export (?:function|class) ${name}\\b`));
    }
    expect(dts).toContain("declare function fetch(");
    const quoted = [...SCRIPT_GUIDE.matchAll(/"(\w+)"/g)].map((m) => m[1] ?? "");
    const codes = quoted.filter((word) => /^[a-z]+[A-Z]\w*$/.test(word));
    expect(codes.sort()).toEqual(["outcomeUnknown", "timedOut", "timedOut"]);
    for (const code of codes) expect(TOOL_ERROR_CODES).toContain(code);
  });

  it("is short, and goes before the prompt rendering", () => {
    expect(Buffer.byteLength(SCRIPT_GUIDE)).toBeLessThan(2_600);
    expect(SCRIPT_GUIDE.split("\n").length).toBeLessThanOrEqual(12);
    expect(withScriptGuide('import {} from "rewind:tools";\n')).toBe(
      `${SCRIPT_GUIDE}\nimport {} from "rewind:tools";\n`,
    );
  });
});
