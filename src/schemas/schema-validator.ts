/**
 * Validates a call's arguments (or an MCP tool's result) against its tool's JSON Schema. Each distinct schema is compiled
 * once (see ajv-compiler.ts for dialects and scopes) and the compiled validator reused, since
 * pinned schemas never change: looked up by the schema object itself first (a run's toolset
 * keeps its objects, so the hot path never serializes the schema), then by its JSON text, in a
 * bounded least-recently-used cache.
 */
import type { SchemaValidator } from "../sandbox/index.ts";
import { compileSchema, type CompiledSchema, type SchemaProblem } from "./ajv-compiler.ts";
import type { JsonSchema } from "../shared/index.ts";

const MAX_CACHED = 5_000;
const byText = new Map<string, CompiledSchema>();
const byObject = new WeakMap<object, CompiledSchema>();

function compiled(schema: JsonSchema): CompiledSchema {
  if (typeof schema === "object") {
    const hit = byObject.get(schema);
    if (hit) return hit;
  }
  const key = JSON.stringify(schema);
  let entry = byText.get(key);
  if (entry) {
    byText.delete(key); // re-inserted below: Map order is the recency order
  } else {
    entry = compileSchema(schema);
    if (byText.size >= MAX_CACHED) {
      const oldest = byText.keys().next();
      if (!oldest.done) byText.delete(oldest.value);
    }
  }
  byText.set(key, entry);
  if (typeof schema === "object") byObject.set(schema, entry);
  return entry;
}

/**
 * Why the schema can't be pinned (can't compile, unresolvable `$ref`, unknown dialect, a pattern
 * RE2 can't run), or undefined. A schema pinned before the pattern rule still validates calls.
 */
export function schemaProblem(schema: JsonSchema): SchemaProblem | undefined {
  const entry = compiled(schema);
  return "problem" in entry ? entry.problem : entry.refused;
}

export const validateAgainstSchema: SchemaValidator = (schema, value, subject = "arguments") => {
  const entry = compiled(schema);
  if ("problem" in entry)
    return {
      message: `the ${subject === "result" ? "tool's output" : subject === "content" ? "requested" : "tool's input"} schema can't be used: ${entry.problem.message}`,
    };
  const { validate } = entry;
  if (validate(value)) return undefined;
  const errors = (validate.errors ?? [])
    .slice(0, 10)
    .map((e) => ({ path: e.instancePath || "/", message: e.message ?? "is invalid", params: e.params }));
  const message = errors.map((e) => `${e.path === "/" ? subject : `${subject}${e.path}`} ${e.message}`).join("; ");
  return { message, details: { errors } };
};
