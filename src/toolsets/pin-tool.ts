/**
 * Pins one tool: its name, description, schemas and annotations. A schema that can't be used
 * (not a schema, can't compile, a `$ref` that leads outside it, an unknown dialect) leaves an
 * MCP server's tool out of the toolset, said in the registration response, so that one broken
 * tool does not refuse the whole server; a host tool's is refused, since the harness wrote it.
 */
import { schemaProblem } from "../schemas/index.ts";
import type { JsonSchema, PinnedTool } from "../shared/index.ts";
import type { OmitReason, OmittedTool } from "../contract/index.ts";
import { RegistrationError } from "./registration-error.ts";

/** A tool as an MCP server lists it (or a host tool as the request declares it). */
export interface ListedTool {
  name: string;
  description?: string | undefined;
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
}

type SchemaVerdict = { schema: JsonSchema } | { reason: OmitReason; message: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function readSchema(schema: unknown): SchemaVerdict {
  if (!isRecord(schema) && typeof schema !== "boolean")
    return { reason: "notASchema", message: "is not a JSON Schema (an object or a boolean)" };
  const problem = schemaProblem(schema);
  return problem ? { reason: problem.reason, message: `can't be used: ${problem.message}` } : { schema };
}

function checkName(listed: ListedTool, where: string, details: Record<string, unknown>): void {
  if (typeof listed.name !== "string" || listed.name.length === 0 || listed.name.length > 128) {
    throw new RegistrationError(422, `${where}: a tool has no usable name`, { ...details, reason: "invalidTool" });
  }
}

function assemble(listed: ListedTool, inputSchema: JsonSchema, outputSchema: JsonSchema | undefined): PinnedTool {
  const tool: PinnedTool = { name: listed.name, inputSchema };
  if (typeof listed.description === "string") tool.description = listed.description;
  if (outputSchema !== undefined) tool.outputSchema = outputSchema;
  if (isRecord(listed.annotations)) tool.annotations = listed.annotations;
  return tool;
}

/** Pins a tool whose schemas must be usable; throws a 422 naming the schema otherwise. */
export function pinTool(listed: ListedTool, where: string, details: Record<string, unknown>): PinnedTool {
  checkName(listed, where, details);
  const read = (schema: unknown, which: string): JsonSchema => {
    const verdict = readSchema(schema);
    if ("schema" in verdict) return verdict.schema;
    throw new RegistrationError(422, `${where}: tool "${listed.name}" ${which} schema ${verdict.message}`, {
      ...details,
      tool: listed.name,
      reason: verdict.reason,
    });
  };
  return assemble(
    listed,
    read(listed.inputSchema, "input"),
    listed.outputSchema === undefined ? undefined : read(listed.outputSchema, "output"),
  );
}

/** Pins an MCP server's tool, or says why it is left out. A nameless tool still refuses the server. */
export function pinListedTool(
  listed: ListedTool,
  server: string,
  where: string,
  details: Record<string, unknown>,
): { tool: PinnedTool } | { omitted: OmittedTool } {
  checkName(listed, where, details);
  const omittedFor = (schema: OmittedTool["schema"], unusable: { reason: OmittedTool["reason"]; message: string }) => ({
    server,
    tool: listed.name,
    schema,
    reason: unusable.reason,
    message: `${schema === "inputSchema" ? "input" : "output"} schema ${unusable.message}`,
  });
  const input = readSchema(listed.inputSchema);
  if (!("schema" in input)) return { omitted: omittedFor("inputSchema", input) };
  if (listed.outputSchema === undefined) return { tool: assemble(listed, input.schema, undefined) };
  const output = readSchema(listed.outputSchema);
  if (!("schema" in output)) return { omitted: omittedFor("outputSchema", output) };
  return { tool: assemble(listed, input.schema, output.schema) };
}
