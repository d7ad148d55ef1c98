/**
 * Observed result shapes: keys and types only, merged across results (absent keys optional,
 * differing types a union, arrays by their items), bounded against hostile results.
 */
import { describe, expect, it } from "vitest";
import { jsonSchemaToTs } from "../../src/declarations/index.ts";
import { mergeShapes, scalarsAsText, shapeOf, SHAPE_LIMITS } from "../../src/shared/observed-shape.ts";

describe("observed shapes", () => {
  it("keeps keys and JSON types, never values", () => {
    const shape = shapeOf({ id: 7, name: "secret-value", tags: ["a"], nested: { ok: true, none: null } });
    expect(shape).toEqual({
      type: "object",
      properties: {
        id: { type: "number" },
        name: { type: "string" },
        tags: { type: "array", items: { type: "string" } },
        nested: {
          type: "object",
          properties: { none: { type: "null" }, ok: { type: "boolean" } },
          required: ["none", "ok"],
        },
      },
      required: ["id", "name", "nested", "tags"],
    });
    expect(JSON.stringify(shape)).not.toContain("secret-value");
  });

  it("makes keys absent from some results optional and differing types unions", () => {
    const merged = mergeShapes(shapeOf({ a: 1, b: "x" }), shapeOf({ a: "one", c: [1, "two"] }));
    expect(merged).toEqual({
      type: "object",
      properties: {
        a: { anyOf: [{ type: "number" }, { type: "string" }] },
        b: { type: "string" },
        c: { type: "array", items: { anyOf: [{ type: "number" }, { type: "string" }] } },
      },
      required: ["a"],
    });
  });

  it("bounds depth, keys and union width", () => {
    let deep: unknown = "leaf";
    for (let i = 0; i < 50; i++) deep = { next: deep };
    expect(JSON.stringify(shapeOf(deep)).length).toBeLessThan(500);
    const wide = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]));
    expect(Object.keys((shapeOf(wide)["properties"] ?? {}) as object)).toHaveLength(SHAPE_LIMITS.keys);
    const many = [1, "s", true, null, [1], { a: 1 }].map((v) => shapeOf(v)).reduce((a, b) => mergeShapes(a, b));
    expect(((many["anyOf"] ?? []) as unknown[]).length).toBeLessThanOrEqual(SHAPE_LIMITS.variants);
  });
});

describe("scalarsAsText", () => {
  it("reads a top-level number, boolean or null of an MCP result as the text today's scripts get", () => {
    expect(scalarsAsText({ type: "number" })).toEqual({ type: "string" });
    expect(scalarsAsText(mergeShapes(shapeOf(42), shapeOf("x")))).toEqual({ type: "string" });
    expect(scalarsAsText(mergeShapes(mergeShapes(shapeOf(true), shapeOf(null)), shapeOf({ a: 1 })))).toEqual({
      anyOf: [{ type: "string" }, { type: "object", properties: { a: { type: "number" } }, required: ["a"] }],
    });
    expect(scalarsAsText({ type: ["number", "null"] })).toEqual({ type: "string" });
    expect(scalarsAsText({ type: ["object", "null"] })).toEqual({ type: ["object", "string"] });
  });

  it("keeps objects, arrays, strings and what is inside them as observed", () => {
    const shape = shapeOf([{ id: 1, ok: true, none: null }]);
    expect(scalarsAsText(shape)).toBe(shape);
    const text = shapeOf("x");
    expect(scalarsAsText(text)).toBe(text);
    expect(scalarsAsText({})).toEqual({});
    expect(scalarsAsText(true)).toBe(true);
  });
});

describe("data-keyed objects (runtime 4 on)", () => {
  const env = (n: number, from = 0) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`VAR_${from + i}`, `value-${i}`]));

  it("observes an object of more keys than the limit as a record of its values' shape", () => {
    const shape = shapeOf(env(41), { records: true });
    expect(shape).toEqual({ type: "object", properties: {}, required: [], additionalProperties: { type: "string" } });
    expect(jsonSchemaToTs(shape)).toBe("{ [key: string]: string }");
    // Without the option (older runs), the first keys are kept, as they were observed.
    expect(Object.keys((shapeOf(env(41))["properties"] ?? {}) as object)).toHaveLength(SHAPE_LIMITS.keys);
  });

  it("widens: a record stays a record, and objects whose keys together pass the limit become one", () => {
    const record = shapeOf(env(41), { records: true });
    const numbers = shapeOf({ A: 1 }, { records: true });
    expect(mergeShapes(record, numbers, { records: true })).toEqual({
      type: "object",
      properties: {},
      required: [],
      additionalProperties: { anyOf: [{ type: "string" }, { type: "number" }] },
    });
    const a = shapeOf(env(30, 0), { records: true });
    const b = shapeOf(env(30, 30), { records: true });
    expect(mergeShapes(a, b, { records: true })["additionalProperties"]).toEqual({ type: "string" });
    // A shape merged with one it already covers is unchanged: the same script stays accepted.
    const merged = mergeShapes(a, b, { records: true });
    expect(mergeShapes(merged, shapeOf(env(5, 100), { records: true }), { records: true })).toEqual(merged);
  });
});
