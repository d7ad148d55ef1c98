/**
 * The one file that uses ajv. Validators are compiled once per distinct schema (keyed by its
 * JSON text) and kept for the worker's life, since pinned schemas never change. Draft 2020-12
 * schemas get the 2020 dialect; everything else is read as draft-07, the dialect most MCP
 * servers emit. Unknown keywords and formats are tolerated: the server, not Rewind, owns them.
 */
import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { SchemaValidator } from "./call-gate.ts";
import type { JsonSchema } from "../shared/toolset.ts";

const addFormats = addFormatsModule as unknown as (ajv: Ajv | Ajv2020) => void;

const options = { strict: false, allErrors: true, validateFormats: true } as const;
const draft07 = new Ajv(options);
const draft2020 = new Ajv2020(options);
addFormats(draft07);
addFormats(draft2020);

const MAX_CACHED = 10_000;
const cache = new Map<string, ValidateFunction | Error>();

function compile(schema: JsonSchema): ValidateFunction | Error {
  const key = JSON.stringify(schema);
  let compiled = cache.get(key);
  if (!compiled) {
    const is2020 = typeof schema === "object" && String(schema["$schema"] ?? "").includes("2020-12");
    try {
      compiled = (is2020 ? draft2020 : draft07).compile(schema);
    } catch (error) {
      compiled = error instanceof Error ? error : new Error(String(error));
    }
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(key, compiled);
  }
  return compiled;
}

/** Returns why the schema itself can't be used, or undefined when it compiles. */
export function schemaProblem(schema: JsonSchema): string | undefined {
  const compiled = compile(schema);
  return compiled instanceof Error ? compiled.message : undefined;
}

export const validateAgainstSchema: SchemaValidator = (schema, args) => {
  const validate = compile(schema);
  if (validate instanceof Error) return { message: `the tool's input schema can't be used: ${validate.message}` };
  if (validate(args)) return undefined;
  const errors = (validate.errors ?? []).slice(0, 10).map((e) => ({ path: e.instancePath || "/", message: e.message ?? "is invalid", params: e.params }));
  const message = errors.map((e) => `${e.path === "/" ? "arguments" : `arguments${e.path}`} ${e.message}`).join("; ");
  return { message, details: { errors } };
};
