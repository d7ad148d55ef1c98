/**
 * The toolset-level rules of both renderings that the golden fixture does not pin down:
 * how descriptions are shown (whole in the prompt, summarised in the compact one), when `args` is optional, how awkward group names
 * are exported, and that nothing but the documented names leaves `rewind:tools`.
 */
import { describe, expect, it } from "vitest";
import {
  argsAreOptional,
  isBindingName,
  renderCompactPrompt,
  renderDts,
  renderPrompt,
  summarize,
} from "../../src/declarations/index.ts";
import { UNDECLARED_MCP_RESULT } from "../../src/declarations/render-dts.ts";
import type { PinnedToolset } from "../../src/shared/toolset.ts";
import { EMPTY_TOOLSET } from "../../src/shared/toolset.ts";

function toolsetWith(group: string, tools: PinnedToolset["mcpServers"][string]["tools"]): PinnedToolset {
  return { ...EMPTY_TOOLSET, mcpServers: { [group]: { url: "http://127.0.0.1:9/mcp", tools } } };
}

describe("summarize", () => {
  it("keeps the first sentence of the first paragraph, on one line", () => {
    expect(summarize("Lists issues.\nSupports paging. Needs a token.")).toBe("Lists issues.");
    expect(summarize("  Lists   the\n issues of a repo  \n\nMore here.")).toBe("Lists the issues of a repo");
    expect(summarize("Version 1.2 of the API is used. Then more.")).toBe("Version 1.2 of the API is used.");
    expect(summarize(undefined)).toBe("");
  });

  it("cuts a long sentence at a word, near 200 characters", () => {
    const long = `${"word ".repeat(100)}end.`;
    const cut = summarize(long);
    expect(cut.length).toBeLessThanOrEqual(200);
    expect(cut.endsWith("word…")).toBe(true);
  });
});

describe("argsAreOptional", () => {
  it("is true only when nothing is required", () => {
    expect(argsAreOptional({ type: "object", properties: { a: { type: "string" } } })).toBe(true);
    expect(argsAreOptional({ type: "object", required: ["a"] })).toBe(false);
    expect(argsAreOptional({ allOf: [{ required: ["a"] }] })).toBe(false);
    expect(argsAreOptional(true)).toBe(true);
    expect(argsAreOptional(null)).toBe(true);
  });
});

describe("renderDts and renderPrompt", () => {
  it("exports a group whose name cannot be a binding under its string name", () => {
    expect(isBindingName("github")).toBe(true);
    expect(isBindingName("delete")).toBe(false);
    expect(isBindingName("my-server")).toBe(false);
    const toolset = toolsetWith("delete", [{ name: "go", inputSchema: { type: "object" }, outputSchema: true }]);
    expect(renderDts(toolset)).toContain(
      '  const __group0: {\n    go(args?: {}): Promise<unknown>;\n  };\n  export { __group0 as "delete" };',
    );
    const text = renderPrompt(toolset);
    expect(text.startsWith('import { "delete" as _delete, sleep,')).toBe(true);
    expect(text).toContain("\n_delete.go({}) → unknown\n");
  });

  it("exports only the groups and the documented built-ins", () => {
    const dts = renderDts({ ...toolsetWith("github", []), workflows: { report: "wf_1" }, http: { allowedHosts: [] } });
    const exported = [...dts.matchAll(/export (?:const|function|type|class) (\w+)/g)].map((m) => m[1]);
    expect(exported).toEqual([
      "github",
      "sleep",
      "waitForSignal",
      "webhook",
      "ToolErrorCode",
      "ToolError",
      "workflows",
    ]);
    expect(dts).toContain("Allowed hosts: none.");
    expect(dts.indexOf("declare function fetch")).toBeGreaterThan(dts.lastIndexOf("}\n\n"));
  });

  it("marks observed result types and prefers a declared output schema", () => {
    const tools = [
      { name: "a", inputSchema: { type: "object" } },
      { name: "b", inputSchema: { type: "object" }, outputSchema: { type: "string" } },
    ];
    const shape = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };
    const observed = { "g.a": { schema: shape, count: 1 }, "g.b": { schema: { type: "number" }, count: 5 } };
    const dts = renderDts(toolsetWith("g", tools), { observed });
    expect(dts).toContain(`    /** @observed from 1 result */\n    a(args?: {}): Promise<{ n: number }>;`);
    expect(dts).toContain("    b(args?: {}): Promise<string>;");
    const text = renderPrompt(toolsetWith("g", tools), { observed });
    expect(text).toContain("\ng.a({}) → { n: number } · @observed from 1 result\n");
    expect(text).toContain("\ng.b({}) → string\n");
  });

  it("shows a model a tool's whole description and every argument's, as its server wrote them", () => {
    // The descriptions a model needs, as real servers write them (filesystem, everything).
    const tools = [
      {
        name: "list_directory",
        description:
          "Get a detailed listing of all files and directories in a specified path. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes.\n\nOnly works within allowed directories:\n- one\n- two  ",
        inputSchema: {
          type: "object",
          properties: {
            path: { type: "string", description: "The directory   to list." },
            options: {
              type: "object",
              properties: {
                depth: { type: "integer", description: "How deep,\nin levels." },
                raw: { type: "boolean" },
              },
            },
          },
          required: ["path"],
        },
      },
      {
        name: "trigger-long-running-operation",
        description: "Demonstrates a long running operation with progress updates.",
        inputSchema: {
          type: "object",
          properties: { duration: { type: "number", description: "Duration of the operation in seconds" } },
        },
      },
    ];
    const text = renderPrompt(toolsetWith("fs", tools));
    expect(text).toContain(
      "\nfs.list_directory({ path: string, options?: { depth?: number, raw?: boolean } }) → unknown · Get a detailed listing of all files and directories in a specified path. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes.\n" +
        "  Only works within allowed directories:\n  - one\n  - two\n" +
        "  - path: The directory to list.\n  - options.depth: How deep, in levels.\n" +
        'fs["trigger-long-running-operation"]({ duration?: number }) → unknown · Demonstrates a long running operation with progress updates.\n' +
        "  - duration: Duration of the operation in seconds\n",
    );
    // Chosen tools (`tools=`) are shown the same way; the compact rendering is the one that summarises.
    expect(renderPrompt(toolsetWith("fs", tools), { tools: new Set(["fs.list_directory"]) })).toContain(
      "[DIR] prefixes.\n",
    );
    expect(renderCompactPrompt(toolsetWith("fs", tools))).not.toContain("[FILE]");
  });

  it("cuts only a runaway description, and says where", () => {
    const long = `${"word ".repeat(3_000)}end`;
    const text = renderPrompt(toolsetWith("g", [{ name: "a", description: long, inputSchema: { type: "object" } }]));
    expect(text).toContain("… (cut at 8000 characters)");
    expect(text).not.toContain("end");
    const guidance = `Use this tool for thinking.\n\n${"Consider alternatives. ".repeat(100)}\n\nYou should: end with an answer.`;
    expect(
      renderPrompt(toolsetWith("g", [{ name: "a", description: guidance, inputSchema: { type: "object" } }])),
    ).toContain("  You should: end with an answer.\n");
  });

  it("says once in the prompt and once in the .d.ts what an MCP result without an output schema is", () => {
    const declared = toolsetWith("g", [
      { name: "b", inputSchema: { type: "object" }, outputSchema: { type: "string" } },
    ]);
    expect(renderDts(declared)).not.toContain(UNDECLARED_MCP_RESULT);
    expect(renderPrompt(declared)).not.toContain(UNDECLARED_MCP_RESULT);
    const tools = [
      { name: "a", inputSchema: { type: "object" } },
      { name: "c", description: "Counts.", inputSchema: { type: "object" } },
    ];
    const dts = renderDts(toolsetWith("g", tools));
    expect(dts.split(UNDECLARED_MCP_RESULT)).toHaveLength(2);
    expect(dts.split("\n")[1]).toBe(`// An MCP tool without an output schema: ${UNDECLARED_MCP_RESULT}`);
    expect(dts).toContain(`    /** Counts. */\n    c(args?: {}): Promise<unknown>;`);
    const text = renderPrompt(toolsetWith("g", tools));
    expect(text.split(UNDECLARED_MCP_RESULT)).toHaveLength(2);
    expect(text).toContain(
      `\ng.c({}) → unknown · Counts.\nMCP tools without an output schema: ${UNDECLARED_MCP_RESULT}\nsleep(`,
    );
    const host = renderPrompt({
      ...EMPTY_TOOLSET,
      hostTools: { h: { taskQueue: "harness", tools: [{ name: "x", inputSchema: { type: "object" } }] } },
    });
    expect(host).not.toContain(UNDECLARED_MCP_RESULT);
  });

  it("reads an MCP tool's observed number, boolean or null as the text today's scripts get; a host tool's as observed", () => {
    const observed = {
      "g.a": {
        schema: { anyOf: [{ type: "number" }, { type: "boolean" }, { type: "object", properties: {}, required: [] }] },
        count: 3,
      },
      "h.a": { schema: { type: "number" }, count: 2 },
    };
    const tools = [{ name: "a", inputSchema: { type: "object" } }];
    const toolset: PinnedToolset = { ...toolsetWith("g", tools), hostTools: { h: { taskQueue: "harness", tools } } };
    const text = renderPrompt(toolset, { observed });
    expect(text).toContain("\ng.a({}) → string | {} · @observed from 3 results\n");
    expect(text).toContain("\nh.a({}) → number · @observed from 2 results\n");
  });
});
