/**
 * What the renderings show of a schema besides its types: each argument's constraints and
 * default after its description in the prompt (`- limit: … (1–50, default 10)`), as JSDoc tags in
 * the .d.ts (`@maximum 50`), a `$ref`'d definition's description where the property has none;
 * that types stay as they were; and that a server's schema cannot make the text or the work grow
 * past its bounds (a default of megabytes, a pattern of a thousand lines, one definition behind a
 * thousand references).
 */
import { describe, expect, it } from "vitest";
import { jsonSchemaToTs, renderDts, renderPrompt } from "../../src/declarations/index.ts";
import { boundedJson } from "../../src/declarations/bounded-text.ts";
import { notesReader } from "../../src/declarations/schema-notes.ts";
import type { JsonSchema, PinnedToolset } from "../../src/shared/toolset.ts";
import { EMPTY_TOOLSET } from "../../src/shared/toolset.ts";

function toolsetWith(inputSchema: JsonSchema, name = "a"): PinnedToolset {
  return { ...EMPTY_TOOLSET, mcpServers: { g: { url: "http://127.0.0.1:9/mcp", tools: [{ name, inputSchema }] } } };
}

/** The prompt's lines under the tool's call: its arguments' notes. */
function argumentLines(inputSchema: JsonSchema): string[] {
  return renderPrompt(toolsetWith(inputSchema))
    .split("\n")
    .filter((line) => line.startsWith("  - "));
}

/** FastMCP 4.2.3's schemas of the notes server's `search_notes` and `add_note`, as pinned. */
const searchNotes = {
  type: "object",
  properties: {
    query: { type: "string", description: "Words to look for in titles and bodies (case-insensitive)" },
    tag: { anyOf: [{ type: "string" }, { type: "null" }], default: null, description: "Only notes with this tag" },
    limit: { type: "integer", default: 10, description: "At most this many notes", minimum: 1, maximum: 50 },
    order: { type: "string", default: "newest", enum: ["newest", "oldest"] },
  },
  required: ["query"],
  additionalProperties: false,
};
const addNote = {
  type: "object",
  properties: {
    title: { type: "string", description: "A short title", maxLength: 120 },
    body: { type: "string", description: "The note's text, in Markdown" },
    tags: { type: "array", items: { type: "string" }, default: [], description: "Labels to find the note by" },
  },
  required: ["title", "body"],
};
/** rmcp 3.11's `add_task`: the enum's description sits on its `$defs` entry. */
const addTask = {
  $defs: { Priority: { description: "How urgent a task is.", enum: ["low", "normal", "high"], type: "string" } },
  type: "object",
  properties: {
    priority: { anyOf: [{ $ref: "#/$defs/Priority" }, { type: "null" }], default: null },
    level: { $ref: "#/$defs/Priority", description: "Its own words win." },
    id: { type: "integer", format: "uint32", minimum: 0 },
  },
};

describe("the prompt's argument lines", () => {
  it("carry the bounds and the default after the description, and a line for an argument with only those", () => {
    expect(argumentLines(searchNotes)).toEqual([
      "  - query: Words to look for in titles and bodies (case-insensitive)",
      "  - tag: Only notes with this tag",
      "  - limit: At most this many notes (1–50, default 10)",
      '  - order: (default "newest")',
    ]);
    expect(argumentLines(addNote)).toEqual([
      "  - title: A short title (at most 120 characters)",
      "  - body: The note's text, in Markdown",
      "  - tags: Labels to find the note by (default [])",
    ]);
  });

  it("say each kind of constraint in a few words", () => {
    const lines = argumentLines({
      properties: {
        when: { type: "string", format: "date-time", description: "When." },
        code: { type: "string", pattern: "^[A-Z]{3}$" },
        id: { type: "string", minLength: 8, maxLength: 8 },
        name: { type: "string", minLength: 1 },
        ratio: { type: "number", exclusiveMinimum: 0, maximum: 1 },
        old: { type: "number", minimum: 0, exclusiveMinimum: true, exclusiveMaximum: 10 },
        step: { type: "integer", maximum: 5 },
        thought: { type: "integer", minimum: 1, maximum: 9007199254740991 },
        paths: { type: "array", items: { type: "string" }, minItems: 1 },
        pair: { type: "array", items: { type: "string" }, minItems: 2, maxItems: 2 },
        blank: { type: "string", minLength: 0, maxLength: 0 },
        odd: { minimum: "1", maximum: Number.NaN, maxLength: -1, minItems: 1.5, pattern: 5, format: "" },
      },
    });
    expect(lines).toEqual([
      "  - when: When. (format date-time)",
      "  - code: (pattern ^[A-Z]{3}$)",
      "  - id: (exactly 8 characters)",
      "  - name: (at least 1 character)",
      "  - ratio: (more than 0, at most 1)",
      "  - old: (more than 0, less than 10)",
      "  - step: (at most 5)",
      "  - thought: (at least 1)",
      "  - paths: (at least 1 item)",
      "  - pair: (exactly 2 items)",
      "  - blank: (at most 0 characters)",
    ]);
  });

  it("leave out what the description already says in the same words", () => {
    const lines = argumentLines({
      properties: {
        include_done: { type: "boolean", default: false, description: "Include finished tasks too (default false)." },
        count: { type: "number", default: 3, minimum: 1, maximum: 10, description: "How many links (1-10)" },
        pages: { type: "integer", default: 1, description: "Pages, default 10." },
        ratio: { type: "number", default: 1, description: "A ratio, default 1.5 if unset" },
      },
    });
    expect(lines).toEqual([
      "  - include_done: Include finished tasks too (default false).",
      "  - count: How many links (1-10) (default 3)",
      "  - pages: Pages, default 10. (default 1)",
      "  - ratio: A ratio, default 1.5 if unset (default 1)",
    ]);
  });

  it("take a description from the definition a property refers to, when the property has none", () => {
    expect(argumentLines(addTask)).toEqual([
      "  - priority: How urgent a task is.",
      "  - level: Its own words win.",
      "  - id: (at least 0, format uint32)",
    ]);
  });

  it("show the nearest default only: a null one hides the definition's", () => {
    const schema = {
      $defs: { Order: { type: "string", enum: ["asc", "desc"], default: "desc" } },
      properties: {
        inherited: { $ref: "#/$defs/Order" },
        hidden: { anyOf: [{ $ref: "#/$defs/Order" }, { type: "null" }], default: null },
        own: { allOf: [{ $ref: "#/$defs/Order" }], default: "asc" },
      },
    };
    expect(argumentLines(schema)).toEqual(['  - inherited: (default "desc")', '  - own: (default "asc")']);
  });

  it("describe the fields of an argument whose schema is a definition", () => {
    const schema = {
      $defs: {
        Address: {
          type: "object",
          properties: { street: { type: "string", maxLength: 80 }, zip: { type: "string", pattern: "^\\d{5}$" } },
        },
      },
      properties: { to: { $ref: "#/$defs/Address" }, stops: { type: "array", items: { $ref: "#/$defs/Address" } } },
    };
    expect(argumentLines(schema)).toEqual([
      "  - to.street: (at most 80 characters)",
      "  - to.zip: (pattern ^\\d{5}$)",
      "  - stops[].street: (at most 80 characters)",
      "  - stops[].zip: (pattern ^\\d{5}$)",
    ]);
  });
});

describe("the .d.ts", () => {
  it("carries them as JSDoc tags on the property, under its description", () => {
    const dts = renderDts(toolsetWith(searchNotes, "search_notes"));
    expect(dts).toContain(
      "      /**\n       * At most this many notes\n       * @minimum 1\n       * @maximum 50\n       * @default 10\n       */\n      limit?: number;\n",
    );
    expect(dts).toContain('      /** @default "newest" */\n      order?: "newest" | "oldest";\n');
    expect(dts).toContain("      /** Only notes with this tag */\n      tag?: string | null;\n");
    const add = renderDts(toolsetWith(addNote, "add_note"));
    expect(add).toContain(
      "      /**\n       * A short title\n       * @maxLength 120\n       */\n      title: string;\n",
    );
    expect(renderDts(toolsetWith(addTask))).toContain(
      '      /** How urgent a task is. */\n      priority?: "low" | "normal" | "high" | null;\n',
    );
  });

  it("keeps every type as it was: only comments are added", () => {
    const bare = (schema: unknown): unknown =>
      JSON.parse(
        JSON.stringify(schema, (key, value: unknown) =>
          ["description", "default", "minimum", "maximum", "maxLength", "format", "$defs"].includes(key)
            ? undefined
            : value,
        ),
      );
    const withoutComments = (text: string) =>
      text
        .replace(/\/\*\*[\s\S]*?\*\//g, "")
        .replace(/;\s*}/g, " }")
        .replace(/\s+/g, " ");
    for (const schema of [searchNotes, addNote]) {
      expect(jsonSchemaToTs(schema, { style: "prompt" })).toBe(jsonSchemaToTs(bare(schema), { style: "prompt" }));
      expect(withoutComments(jsonSchemaToTs(schema))).toBe(withoutComments(jsonSchemaToTs(bare(schema))));
    }
  });
});

describe("bounds on what a server's schema can make of them", () => {
  it("cuts a huge default, a hostile pattern and a long format, and keeps each on one line", () => {
    const schema = {
      properties: {
        big: { type: "array", default: Array.from({ length: 1_000_000 }, (_, i) => i) },
        deep: { default: JSON.parse(`${"[".repeat(5_000)}${"]".repeat(5_000)}`) as unknown },
        text: { type: "string", default: "x".repeat(5_000_000) },
        wide: { type: "object", default: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i])) },
        pattern: { type: "string", pattern: `(a|b)*\n*/ end\u2028${"(x+x+)+y|".repeat(100_000)}` },
        format: { type: "string", format: "f".repeat(10_000) },
      },
    };
    const started = performance.now();
    const lines = argumentLines(schema);
    const dts = renderDts(toolsetWith(schema));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(lines).toHaveLength(6);
    for (const line of lines) expect(line.length).toBeLessThan(260);
    expect(lines[0]).toMatch(/^ {2}- big: \(default \[0,1,2,.*…\)$/);
    expect(lines[1]).toMatch(/^ {2}- deep: \(default \[\[\[.*…\)$/);
    expect(lines[4]).toMatch(/^ {2}- pattern: \(pattern "\(a\|b\)\*\\n\*\/ end\\u2028\(x\+x\+\)\+y\|.*…"\)$/);
    // In the .d.ts the pattern is one line of its comment, which it cannot close.
    const comment = /\/\*\* @pattern (.*) \*\/\n\s*pattern\?: string;/.exec(dts);
    expect(comment?.[1]).toContain("*\\/ end");
    expect(dts.length).toBeLessThan(5_000);
  });

  it("reads a definition's default once, however many properties refer to it", () => {
    let reads = 0;
    const shared = {
      type: "string",
      get default() {
        reads++;
        return "x";
      },
    };
    const properties = Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`p${i}`, { $ref: "#/$defs/S" }]));
    const schema = { $defs: { S: shared }, type: "object", properties };
    expect(argumentLines(schema)).toHaveLength(40);
    expect(reads).toBe(1);
    reads = 0;
    renderDts(toolsetWith(schema));
    expect(reads).toBe(1);
  });

  it("follows a chain of references a few hops only, and never throws", () => {
    const defs: Record<string, unknown> = { d20: { description: "far away", maxLength: 3 } };
    for (let i = 0; i < 20; i++) defs[`d${i}`] = { $ref: `#/$defs/d${i + 1}` };
    const read = notesReader({ $defs: defs });
    expect(read({ $ref: "#/$defs/d0" })).toEqual({ description: undefined, constraints: {}, shape: undefined });
    expect(read({ $ref: "#/$defs/d15" }).description).toBe("far away");
    const loop = { $defs: { a: { $ref: "#/$defs/a" } } };
    expect(notesReader(loop)({ $ref: "#/$defs/a" }).constraints).toEqual({});
    const throwing = new Proxy(
      {},
      {
        get: () => {
          throw new Error("boom");
        },
      },
    );
    expect(notesReader(throwing)(throwing).constraints).toEqual({});
  });

  it("prints values as JSON, cut past the bound with …", () => {
    expect(boundedJson({ a: [1, "b", null, true], "c\u2028": { d: 1.5 } }, 100)).toBe(
      '{"a":[1,"b",null,true],"c\\u2028":{"d":1.5}}',
    );
    expect(boundedJson("x".repeat(50), 10)).toBe(`"${"x".repeat(9)}…`);
    expect(boundedJson(`${"x".repeat(8)}😀`, 10)).toBe(`"${"x".repeat(8)}…`);
  });
});
