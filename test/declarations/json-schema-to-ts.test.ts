/**
 * Rules of the schema → type conversion the golden files cannot show on their own: both
 * styles side by side, and that schemas from servers we do not control (garbage, cyclic,
 * hostile in size) never throw and never produce unbounded text.
 */
import { describe, expect, it } from "vitest";
import { formatJsDoc, jsonSchemaToTs, propertyKey } from "../../src/declarations/index.ts";

const prompt = (schema: unknown): string => jsonSchemaToTs(schema, { style: "prompt" });

describe("jsonSchemaToTs", () => {
  it("separates members with semicolons for the type-checker and commas for the prompt", () => {
    const schema = { type: "object", properties: { a: { type: "string" }, b: { enum: ["x", "y"] } }, required: ["a"] };
    expect(jsonSchemaToTs(schema)).toBe('{ a: string; b?: "x" | "y" }');
    expect(prompt(schema)).toBe('{ a: string, b?: "x" | "y" }');
  });

  it("puts descriptions in JSDoc, indented from the given line, and leaves them out of the prompt", () => {
    const schema = { type: "object", properties: { a: { type: "string", description: "The a. Ends */ early?" } } };
    expect(jsonSchemaToTs(schema, { indent: "    " })).toBe(
      "{\n      /** The a. Ends *\\/ early? */\n      a?: string;\n    }",
    );
    expect(prompt(schema)).toBe("{ a?: string }");
  });

  it("quotes property names that are not identifiers", () => {
    expect(propertyKey("list-issues")).toBe('"list-issues"');
    expect(propertyKey('a"b')).toBe('"a\\"b"');
    expect(propertyKey("$ok_1")).toBe("$ok_1");
    expect(propertyKey("delete")).toBe("delete");
    expect(propertyKey("new")).toBe('"new"');
    expect(prompt({ properties: { "": { type: "string" } }, required: [""] })).toBe('{ "": string }');
  });

  it("reads OpenAPI nullable and type arrays alike", () => {
    expect(prompt({ type: "string", nullable: true })).toBe("string | null");
    expect(prompt({ type: ["string", "null"] })).toBe("string | null");
    expect(prompt({ type: ["string", "null"], nullable: true })).toBe("string | null");
  });

  it("cuts recursion after one expansion, wherever the reference points", () => {
    const list = { $defs: { L: { type: "object", properties: { next: { $ref: "#/$defs/L" } } } }, $ref: "#/$defs/L" };
    expect(prompt(list)).toBe("{ next?: { next?: unknown } }");
    const mutual = {
      definitions: {
        A: { properties: { b: { $ref: "#/definitions/B" } } },
        B: { properties: { a: { $ref: "#/definitions/A" } } },
      },
      $ref: "#/definitions/A",
    };
    expect(prompt(mutual)).toBe("{ b?: { a?: { b?: { a?: unknown } } } }");
  });

  it("resolves escaped JSON pointers and refuses anything but local ones", () => {
    const schema = { $defs: { "a/b": { type: "number" }, "m~n": { type: "string" } } };
    expect(prompt({ ...schema, $ref: "#/$defs/a~1b" })).toBe("number");
    expect(prompt({ ...schema, $ref: "#/$defs/m~0n" })).toBe("string");
    expect(prompt({ ...schema, $ref: "#/$defs/%E0%A4%A" })).toBe("unknown");
    expect(prompt({ ...schema, $ref: "other.json#/$defs/a~1b" })).toBe("unknown");
    expect(prompt({ ...schema, $ref: "#/$defs/constructor" })).toBe("unknown");
  });

  it("intersects a base type with its compositions and simplifies the trivial parts away", () => {
    const base = { type: "object", properties: { id: { type: "string" } }, required: ["id"] };
    expect(prompt({ ...base, anyOf: [{ required: ["a"] }, { required: ["b"] }] })).toBe("{ id: string }");
    expect(prompt({ ...base, oneOf: [{ properties: { a: { const: 1 } } }, { properties: { b: { const: 2 } } }] })).toBe(
      "{ id: string } & ({ a?: 1 } | { b?: 2 })",
    );
    expect(prompt({ anyOf: [{ type: "string" }, {}] })).toBe("unknown");
    expect(prompt({ allOf: [{ type: "string" }, false] })).toBe("never");
    expect(prompt({ type: "string", anyOf: [], oneOf: [] })).toBe("string");
  });

  it("writes JSDoc on one line when it can, and never lets a description close it", () => {
    expect(formatJsDoc("One line.", "  ")).toBe("  /** One line. */");
    expect(formatJsDoc("Two\n\nparagraphs */", "")).toBe("/**\n * Two\n *\n * paragraphs *\\/\n */");
    expect(formatJsDoc("x".repeat(100_000), "").length).toBeLessThan(8_100);
  });
});

describe("jsonSchemaToTs on hostile input", () => {
  const cyclic: Record<string, unknown> = { type: "object" };
  cyclic.properties = { self: cyclic, list: { type: "array", items: cyclic } };
  cyclic.anyOf = [cyclic];
  const throwing = new Proxy(
    {},
    {
      get: () => {
        throw new Error("boom");
      },
      has: () => {
        throw new Error("boom");
      },
    },
  );
  const garbage: unknown[] = [
    null,
    undefined,
    0,
    42,
    Number.NaN,
    "string",
    [],
    [1, 2],
    () => 1,
    Symbol("s"),
    10n,
    cyclic,
    throwing,
    { type: 5 },
    { type: [null, {}] },
    { properties: 5 },
    { properties: [1] },
    { required: "x", properties: { x: {} } },
    { enum: "x" },
    { enum: [{}, [], () => 1] },
    { const: undefined },
    { $ref: 5 },
    { $ref: "#/%" },
    { items: "x" },
    { prefixItems: [null, 5] },
    { anyOf: "x" },
    { allOf: [null] },
    { additionalProperties: 5 },
    { patternProperties: [] },
    { type: "array", items: [], minItems: -5 },
    { type: "object", properties: { a: { description: 5 } } },
  ];

  it.each(garbage.map((g, i) => [i, g]))("never throws on garbage #%i", (_i, schema) => {
    for (const style of ["dts", "prompt"] as const) expect(typeof jsonSchemaToTs(schema, { style })).toBe("string");
  });

  it("stops at the depth limit", () => {
    let schema: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 10_000; i++) schema = { type: "object", properties: { a: schema }, required: ["a"] };
    const text = prompt(schema);
    expect(text).toBe(`${"{ a: ".repeat(9)}unknown${" }".repeat(9)}`);
    expect(prompt({ items: { items: { items: { type: "string" } } } })).toBe("string[][][]");
    expect(jsonSchemaToTs({ items: { items: { type: "string" } } }, { maxDepth: 1 })).toBe("unknown[][]");
  });

  it("survives long chains of compositions and references", () => {
    let schema: unknown = { type: "string" };
    for (let i = 0; i < 100_000; i++) schema = { anyOf: [schema] };
    expect(prompt(schema)).toBe("unknown");
    const defs: Record<string, unknown> = {};
    for (let i = 0; i < 1000; i++) defs[`d${i}`] = { $ref: `#/$defs/d${i + 1}` };
    expect(prompt({ $defs: defs, $ref: "#/$defs/d0" })).toBe("unknown");
  });

  it("bounds the output of wide and exponential schemas", () => {
    const properties = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`p${i}`, { type: "string" }]));
    const wide = prompt({ type: "object", properties });
    expect(wide.length).toBeLessThan(10_000);
    expect(wide).toContain("[key: string]: unknown");

    const defs: Record<string, unknown> = { d30: { type: "string" } };
    for (let i = 0; i < 30; i++)
      defs[`d${i}`] = { properties: { a: { $ref: `#/$defs/d${i + 1}` }, b: { $ref: `#/$defs/d${i + 1}` } } };
    const exponential = jsonSchemaToTs({ $defs: defs, $ref: "#/$defs/d0" }, { maxDepth: 64 });
    expect(exponential.length).toBeLessThanOrEqual(50_000);

    expect(prompt({ enum: Array.from({ length: 1000 }, (_, i) => `v${i}`) })).toBe("string");
    expect(prompt({ const: "x".repeat(10_000) })).toBe("string");
    expect(prompt({ prefixItems: Array.from({ length: 100 }, () => ({ type: "number" })) })).toBe("unknown[]");
  });
});
