/**
 * A policy's `revert`, checked before it is pinned: its tool is a tool of the same toolset, its
 * arguments are a template that parses (placeholders are whole strings naming `args` or `result`),
 * and, when the revert tool has an input schema, the template's literal shape does not plainly
 * break it (a required key missing, a key it forbids, a literal of the wrong type or outside an
 * enum). Every problem is listed at once: 400 for what is wrong with the request itself, 422 for
 * a template the revert tool's pinned schema refuses. What only a run knows (a path missing from
 * a result) is found at rollback time and recorded as not reverted.
 */
import { checkTemplate, parsePlaceholder, type TemplateProblem } from "../shared/index.ts";
import type { JsonSchema, PinnedToolset, RevertPolicy } from "../shared/index.ts";

export class RevertPolicyError extends Error {
  override name = "RevertPolicyError";
  readonly status: 400 | 422;
  readonly problems: TemplateProblem[];

  constructor(status: 400 | 422, message: string, problems: TemplateProblem[]) {
    super(message);
    this.status = status;
    this.problems = problems;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The pinned input schema of `tool` (`group.tool`), if the toolset has it as an MCP or host tool. */
function inputSchemaOf(toolset: Omit<PinnedToolset, "policies">, tool: string): JsonSchema | undefined {
  const dot = tool.indexOf(".");
  const group = tool.slice(0, dot);
  const name = tool.slice(dot + 1);
  const tools = toolset.mcpServers[group]?.tools ?? toolset.hostTools[group]?.tools ?? [];
  return tools.find((t) => t.name === name)?.inputSchema;
}

const isPlaceholder = (value: unknown): boolean => {
  if (typeof value !== "string") return false;
  const parsed = parsePlaceholder(value);
  return parsed !== undefined && !("problem" in parsed);
};

function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** Whether a literal fits a schema's `type` (a name or a list of names). */
function fitsType(value: unknown, type: unknown): boolean {
  const names = Array.isArray(type) ? type : [type];
  if (!names.every((name) => typeof name === "string")) return true;
  const actual = jsonTypeOf(value);
  return names.some((name) => name === actual || (name === "number" && actual === "integer"));
}

/** Problems of a literal value against one property's schema: its type and enum, one level only. */
function literalProblems(value: unknown, schema: unknown, at: string): TemplateProblem[] {
  if (!isObject(schema) || isPlaceholder(value)) return [];
  if (schema["type"] !== undefined && !fitsType(value, schema["type"]))
    return [
      { at, message: `is ${jsonTypeOf(value)}; the revert tool's schema wants ${JSON.stringify(schema["type"])}` },
    ];
  const choices = schema["enum"];
  if (Array.isArray(choices) && !choices.some((choice) => JSON.stringify(choice) === JSON.stringify(value)))
    return [{ at, message: `is not one of ${JSON.stringify(choices)}, the revert tool's schema's enum` }];
  return [];
}

/** What the template's top level plainly breaks in the revert tool's input schema. */
function shapeProblems(template: unknown, schema: JsonSchema | undefined, at: string): TemplateProblem[] {
  if (!isObject(schema) || isPlaceholder(template)) return [];
  const wantsObject = schema["type"] === "object";
  if (!isObject(template))
    return wantsObject ? [{ at, message: "must be an object: the revert tool takes an object" }] : [];
  const problems: TemplateProblem[] = [];
  const properties = isObject(schema["properties"]) ? schema["properties"] : {};
  const required = Array.isArray(schema["required"]) ? schema["required"] : [];
  for (const key of required)
    if (typeof key === "string" && !Object.hasOwn(template, key))
      problems.push({ at: `${at}.${key}`, message: "is required by the revert tool's input schema" });
  for (const [key, value] of Object.entries(template)) {
    if (!Object.hasOwn(properties, key)) {
      if (schema["additionalProperties"] === false)
        problems.push({ at: `${at}.${key}`, message: "is not a property the revert tool's input schema allows" });
      continue;
    }
    problems.push(...literalProblems(value, properties[key], `${at}.${key}`));
  }
  return problems;
}

/** Checks `revert` of the policy of `tool` against the toolset; answers it as pinned. */
export function pinRevert(
  tool: string,
  revert: { tool: string; args?: unknown },
  toolset: Omit<PinnedToolset, "policies">,
  tools: ReadonlySet<string>,
): RevertPolicy {
  const where = `policies["${tool}"].revert`;
  const problems: TemplateProblem[] = [];
  if (!tools.has(revert.tool))
    problems.push({
      at: `${where}.tool`,
      message: `"${revert.tool}" is not a tool of this toolset (write group.tool)`,
    });
  if (revert.args === undefined)
    problems.push({ at: `${where}.args`, message: "is required (a template, {} for none)" });
  else problems.push(...checkTemplate(revert.args, `${where}.args`));
  if (problems.length === 0) {
    const schemaProblems = shapeProblems(revert.args, inputSchemaOf(toolset, revert.tool), `${where}.args`);
    if (schemaProblems.length > 0) throw new RevertPolicyError(422, describe(where, schemaProblems), schemaProblems);
    return { tool: revert.tool, args: revert.args };
  }
  throw new RevertPolicyError(400, describe(where, problems), problems);
}

function describe(where: string, problems: TemplateProblem[]): string {
  const list = problems.map((p) => `${p.at} ${p.message}`).join("; ");
  return `${where}: ${problems.length === 1 ? "a problem" : `${problems.length} problems`}: ${list}`;
}
