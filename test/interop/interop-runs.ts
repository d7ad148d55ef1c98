/**
 * What the interop suite does for every server it meets: read the tools a registration pinned,
 * call one from a Rewind run, and check what the script got against the tool's declared
 * outputSchema — with ajv, on its own, not with Rewind's validator, so a bug there can't hide a
 * bug here — or, lacking one, that it is a JSON value, and name its type.
 */
import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";
import { startRun } from "../helpers/toolset.ts";

export interface PinnedToolView {
  name: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  execution?: { taskSupport?: string };
}

/** The tools a registration pinned for one server, in the document's order. */
export async function pinnedTools(stack: RewindStack, toolset: string, group: string): Promise<PinnedToolView[]> {
  const { status, body } = await stack.request("GET", `/v1/toolsets/${toolset}`);
  if (status !== 200) throw new Error(`GET /v1/toolsets/${toolset} answered ${status}: ${JSON.stringify(body)}`);
  const document = body["document"] as { mcpServers: Record<string, { tools: PinnedToolView[] } | undefined> };
  const server = document.mcpServers[group];
  if (!server) throw new Error(`toolset ${toolset} has no server ${group}`);
  return server.tools;
}

export type RunOutcome = ApiBody & { id: string };

/** Runs a script that calls `group.tool(args)` once and returns what it got. */
export async function callInRun(
  stack: RewindStack,
  toolset: string,
  group: string,
  tool: string,
  args: unknown,
  timeoutMs = 30_000,
): Promise<RunOutcome> {
  const script = `import { ${group} } from "rewind:tools";\nexport default async () => await ${group}[${JSON.stringify(tool)}](${JSON.stringify(args)});`;
  const id = await startRun(stack, { toolset, script });
  return { id, ...(await waitForRun(stack, id, timeoutMs)) };
}

/** `"string"`, `"number"`, `"boolean"`, `"null"`, `"array"`, `"object"`, or `"not JSON"`. */
export function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return value.every(isJsonValue) ? "array" : "not JSON";
  switch (typeof value) {
    case "string":
    case "boolean":
      return typeof value;
    case "number":
      return Number.isFinite(value) ? "number" : "not JSON";
    case "object":
      return isJsonValue(value) ? "object" : "not JSON";
    default:
      return "not JSON";
  }
}

function isJsonValue(value: unknown): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJsonValue);
  if (typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return false;
  return Object.values(value).every(isJsonValue);
}

const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;
const options = { strict: false, allErrors: true } as const;

/**
 * Why `value` does not match `schema`, or undefined when it does. A schema that names draft-07
 * is checked as draft-07; one that names no dialect as 2020-12, MCP's default.
 */
export function schemaMismatch(schema: Record<string, unknown>, value: unknown): string | undefined {
  const { $schema, ...rest } = schema;
  const ajv = typeof $schema === "string" && DRAFT_07.test($schema) ? new Ajv(options) : new Ajv2020(options);
  const validate: ValidateFunction = ajv.compile(rest);
  return validate(value) ? undefined : ajv.errorsText(validate.errors);
}
