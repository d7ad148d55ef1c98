/**
 * The shape of tool results, observed rather than declared: keys and JSON types, never values.
 * Shapes are JSON Schemas so the declarations render them like any other; merging two makes
 * keys absent from one optional and differing types a union. Depth, keys and union width are
 * bounded, so a hostile or enormous result can't blow up the declarations. Workflow-safe.
 */
import type { JsonSchema } from "./toolset.ts";

export const SHAPE_LIMITS = { depth: 5, keys: 40, variants: 6 } as const;

type Schema = { [key: string]: unknown };

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value === "number" ? "number" : typeof value;
}

/**
 * How shapes are taken and merged. `records` (runs of sandbox runtime 4 on, and the toolset's
 * record): an object of more keys than SHAPE_LIMITS.keys, or two whose keys together are more,
 * is data keyed by name (environment variables, ids) rather than a fixed set of fields, and is
 * observed as a record: `{ type: "object", additionalProperties: <its values' shape> }`, which
 * renders as `Record<string, T>`; merging a record with an object widens the record. Without it
 * (older runs, whose observations must replay as they were made), the first keys are kept.
 */
export interface ShapeOptions {
  records?: boolean;
}

/** The shape of one value. */
export function shapeOf(value: unknown, options: ShapeOptions = {}, depth = 0): Schema {
  const type = typeOf(value);
  if (depth >= SHAPE_LIMITS.depth) return {};
  if (type === "array") {
    const items = (value as unknown[])
      .slice(0, 20)
      .reduce<Schema | undefined>(
        (acc, item) =>
          acc
            ? mergeShapes(acc, shapeOf(item, options, depth + 1), options, depth + 1)
            : shapeOf(item, options, depth + 1),
        undefined,
      );
    return items ? { type: "array", items } : { type: "array" };
  }
  if (type === "object") {
    const all = Object.keys(value as object);
    if (options.records && all.length > SHAPE_LIMITS.keys) {
      const values = all
        .slice(0, 20)
        .map((key) => shapeOf((value as Record<string, unknown>)[key], options, depth + 1));
      return recordOf(values, options, depth);
    }
    const keys = all.sort().slice(0, SHAPE_LIMITS.keys);
    const properties: Record<string, Schema> = {};
    for (const key of keys) properties[key] = shapeOf((value as Record<string, unknown>)[key], options, depth + 1);
    return { type: "object", properties, required: keys };
  }
  return type === "string" || type === "number" || type === "boolean" || type === "null" ? { type } : {};
}

/** A record whose values have the merged shape of `values`. */
function recordOf(values: Schema[], options: ShapeOptions, depth: number): Schema {
  const merged = values.reduce<Schema | undefined>(
    (acc, shape) => (acc ? mergeShapes(acc, shape, options, depth + 1) : shape),
    undefined,
  );
  return { type: "object", properties: {}, required: [], additionalProperties: merged ?? {} };
}

const isRecordShape = (schema: Schema) =>
  typeof schema["additionalProperties"] === "object" && schema["additionalProperties"] !== null;

function variants(schema: Schema): Schema[] {
  return Array.isArray(schema["anyOf"]) ? (schema["anyOf"] as Schema[]) : [schema];
}

/** Merges two shapes: objects key by key, arrays by their items, other types into a union. */
export function mergeShapes(a: Schema, b: Schema, options: ShapeOptions = {}, depth = 0): Schema {
  if (Object.keys(a).length === 0 || Object.keys(b).length === 0) return {};
  const all = [...variants(a), ...variants(b)];
  const byType = new Map<string, Schema>();
  for (const variant of all) {
    const type = String(variant["type"] ?? "unknown");
    const seen = byType.get(type);
    byType.set(type, seen ? mergeSameType(seen, variant, options, depth) : variant);
  }
  const merged = [...byType.values()];
  if (merged.length > SHAPE_LIMITS.variants) return {};
  return merged.length === 1 ? (merged[0] as Schema) : { anyOf: merged };
}

function mergeSameType(a: Schema, b: Schema, options: ShapeOptions, depth: number): Schema {
  if (a["type"] === "array") {
    const items =
      a["items"] && b["items"]
        ? mergeShapes(a["items"] as Schema, b["items"] as Schema, options, depth + 1)
        : (a["items"] ?? b["items"]);
    return items ? { type: "array", items } : { type: "array" };
  }
  if (a["type"] !== "object") return a;
  const pa = (a["properties"] ?? {}) as Record<string, Schema>;
  const pb = (b["properties"] ?? {}) as Record<string, Schema>;
  const union = [...new Set([...Object.keys(pa), ...Object.keys(pb)])].sort();
  if (options.records && (isRecordShape(a) || isRecordShape(b) || union.length > SHAPE_LIMITS.keys)) {
    const values = [a, b].flatMap((shape) => [
      ...Object.values((shape["properties"] ?? {}) as Record<string, Schema>),
      ...(isRecordShape(shape) ? [shape["additionalProperties"] as Schema] : []),
    ]);
    return recordOf(values, options, depth);
  }
  const keys = union.slice(0, SHAPE_LIMITS.keys);
  const properties: Record<string, Schema> = {};
  for (const key of keys) {
    const x = pa[key];
    const y = pb[key];
    properties[key] = x && y ? mergeShapes(x, y, options, depth + 1) : ((x ?? y) as Schema);
  }
  const ra = new Set((a["required"] ?? []) as string[]);
  const required = ((b["required"] ?? []) as string[]).filter((key) => ra.has(key) && keys.includes(key));
  return { type: "object", properties, required };
}

/** A stable key for a shape, to tell whether a run has seen it before. */
export function shapeKey(shape: JsonSchema): string {
  return JSON.stringify(shape);
}

const SCALARS = new Set(["number", "integer", "boolean", "null"]);

function scalarAsText(variant: Schema): Schema {
  const type = variant["type"];
  if (typeof type === "string") return SCALARS.has(type) ? { type: "string" } : variant;
  if (!Array.isArray(type) || !type.some((t) => SCALARS.has(String(t)))) return variant;
  const types = [...new Set(type.map((t) => (SCALARS.has(String(t)) ? "string" : t)))];
  return { ...variant, type: types.length === 1 ? types[0] : types };
}

/**
 * The observed shape of an MCP tool's results as a script gets them today (sandbox runtime 3):
 * a number, boolean or null at the top can only have come from one text block that runtimes 1
 * and 2 parsed as any JSON (MCP's structuredContent is an object), and such text now reaches the
 * script as a string. Shapes recorded by runs of either rule thus declare what today's runs see;
 * objects and arrays, parsed by both rules, are kept as they are.
 *
 * @example
 * scalarsAsText({ anyOf: [{ type: "number" }, { type: "object", properties: {}, required: [] }] });
 * // { anyOf: [{ type: "string" }, { type: "object", properties: {}, required: [] }] }
 */
export function scalarsAsText(shape: JsonSchema): JsonSchema {
  if (typeof shape === "boolean") return shape;
  const before = variants(shape);
  const after = before.map(scalarAsText);
  if (after.every((variant, i) => variant === before[i])) return shape;
  const unique = [...new Map(after.map((variant) => [shapeKey(variant), variant])).values()];
  return unique.length === 1 ? (unique[0] as Schema) : { anyOf: unique };
}

/**
 * A shape as a short type text, for messages: `{ items: { id: number }[], next?: string }`,
 * `Record<string, string>`, `string | null`. Deeper than `depth` is `…`.
 */
export function shapeText(shape: Schema, depth = 3): string {
  if (Array.isArray(shape["anyOf"])) return (shape["anyOf"] as Schema[]).map((v) => shapeText(v, depth)).join(" | ");
  const type = shape["type"];
  if (type === undefined) return "unknown";
  if (depth <= 0) return "…";
  if (type === "array") {
    const items = shape["items"] as Schema | undefined;
    if (!items) return "unknown[]";
    const text = shapeText(items, depth - 1);
    return text.includes(" | ") ? `(${text})[]` : `${text}[]`;
  }
  if (type !== "object") return String(type);
  if (isRecordShape(shape)) return `Record<string, ${shapeText(shape["additionalProperties"] as Schema, depth - 1)}>`;
  const required = new Set((shape["required"] ?? []) as string[]);
  const properties = Object.entries((shape["properties"] ?? {}) as Record<string, Schema>);
  if (properties.length === 0) return "{}";
  const shown = properties.slice(0, 12).map(([key, value]) => {
    const name = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : JSON.stringify(key);
    return `${name}${required.has(key) ? "" : "?"}: ${shapeText(value, depth - 1)}`;
  });
  return `{ ${shown.join(", ")}${properties.length > shown.length ? ", …" : ""} }`;
}
