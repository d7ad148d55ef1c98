/**
 * Which JSON Schema dialect a tool's schema is written in, read from its `$schema`, and whether
 * it declares ids. Kept apart from the ajv file because both answers are plain JSON questions:
 * the dialect picks the validator class, and a schema that declares ids gets a validator scope
 * of its own (ids are registered process-wide in an ajv instance, so two schemas with one `$id`
 * would otherwise collide or, worse, resolve into each other).
 */
import type { JsonSchema } from "../shared/index.ts";

export const SCHEMA_DIALECTS = ["draft-04", "draft-06", "draft-07", "2019-09", "2020-12"] as const;
export type SchemaDialect = (typeof SCHEMA_DIALECTS)[number];

/** Each dialect's meta-schema URI as its ajv class registers it. */
export const CANONICAL_META: Record<SchemaDialect, string> = {
  "draft-04": "http://json-schema.org/draft-04/schema#",
  "draft-06": "http://json-schema.org/draft-06/schema#",
  "draft-07": "http://json-schema.org/draft-07/schema#",
  "2019-09": "https://json-schema.org/draft/2019-09/schema",
  "2020-12": "https://json-schema.org/draft/2020-12/schema",
};

// Servers spell the same URI with http or https, with or without the empty fragment.
const META_URI = /^https?:\/\/json-schema\.org\/(draft-0[467]|draft\/2019-09|draft\/2020-12)\/schema#?$/;

/** No `$schema` reads as draft-07, the dialect most MCP servers emit. */
export const DEFAULT_DIALECT: SchemaDialect = "draft-07";

export type DialectOf = { dialect: SchemaDialect } | { unsupported: string };

export function dialectOf(schema: JsonSchema): DialectOf {
  if (typeof schema === "boolean" || schema["$schema"] === undefined) return { dialect: DEFAULT_DIALECT };
  const uri = schema["$schema"];
  if (typeof uri !== "string") return { unsupported: "$schema must be a string" };
  const match = META_URI.exec(uri.trim());
  if (!match?.[1])
    return {
      unsupported: `unsupported $schema "${uri.slice(0, 200)}" (supported: draft-04, draft-06, draft-07, 2019-09, 2020-12)`,
    };
  return { dialect: match[1].replace("draft/", "") as SchemaDialect };
}

/**
 * Whether the schema declares an id anywhere (`$id`, or draft-04's `id`). Over-approximates
 * (an `enum` value with a string `id` counts too): a false yes only costs a scope of its own.
 */
export function declaresIds(schema: unknown, depth = 0): boolean {
  if (typeof schema !== "object" || schema === null) return false;
  if (depth > 64) return true; // too deep to look through: treat it as declaring some
  if (Array.isArray(schema)) return schema.some((item) => declaresIds(item, depth + 1));
  const fields = schema as Record<string, unknown>;
  if (typeof fields["$id"] === "string" || typeof fields["id"] === "string") return true;
  return Object.values(fields).some((value) => declaresIds(value, depth + 1));
}
