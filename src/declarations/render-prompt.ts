/**
 * Renders a pinned toolset as the text a model reads before writing a script: the import line it
 * should copy, then each tool (its call on one line with single-line types, then what its server
 * says about it and about each argument), then the built-ins. A model that has never seen a
 * server writes its script from this alone, so a tool's description is kept whole (units,
 * formats of results, deprecations are in it), up to a bound that only runaway descriptions
 * reach. The compact rendering is the one that summarises.
 */
import { TOOL_ERROR_CODES } from "../shared/index.ts";
import type { PinnedTool, PinnedToolset } from "../shared/index.ts";
import { isIdentifierName, jsonSchemaToTs } from "./json-schema-to-ts.ts";
import {
  UNDECLARED_MCP_RESULT,
  isBindingName,
  observedTag,
  renderedGroups,
  resultSchemaOf,
  workflowInputParameter,
} from "./render-dts.ts";
import { describedLine } from "./notes-text.ts";
import { notesReader } from "./schema-notes.ts";
import { promptTypeText } from "./type-text.ts";
import type { RenderOptions } from "./render-dts.ts";

const SUMMARY_LENGTH = 200;
/** Past this, a description is cut (and says so): no server's own guidance comes near it. */
const MAX_DESCRIPTION = 8_000;
/** An argument's description, on one line. */
const MAX_ARGUMENT_DESCRIPTION = 1_000;
/** Arguments described per tool, nested ones included. */
const MAX_ARGUMENTS_DESCRIBED = 40;
/** Arguments looked at per tool, nested ones included, with something to say or not. */
const MAX_ARGUMENTS_READ = 400;

export function renderPrompt(toolset: PinnedToolset, options: RenderOptions = {}): string {
  return promptText(toolset, options, (groups) => {
    const lines: string[] = [];
    for (const { group, kind, tools } of groups) {
      for (const tool of tools) lines.push(toolLine(group, kind, tool, options));
    }
    const undeclared = groups.some(
      ({ kind, tools }) => kind === "mcp" && tools.some((tool) => tool.outputSchema === undefined),
    );
    if (undeclared) lines.push(`MCP tools without an output schema: ${UNDECLARED_MCP_RESULT}`);
    return lines;
  });
}

/**
 * The frame of both prompt renderings (this one and the compact one): the import line of the
 * groups rendered, the lines `toolLines` gives for those groups, then the built-ins.
 */
export function promptText(
  toolset: PinnedToolset,
  options: RenderOptions,
  toolLines: (groups: ReturnType<typeof renderedGroups>) => string[],
): string {
  const groups = renderedGroups(toolset, options);
  const workflows = Object.keys(toolset.workflows);
  const lines = [
    importLine(
      groups.map(({ group }) => group),
      workflows.length > 0,
    ),
    ...toolLines(groups),
    ...builtinLines(workflows, toolset.http?.allowedHosts, options),
  ];
  return `${lines.join("\n")}\n`;
}

/** The line a script copies: the groups (aliased where a name cannot be a binding) and the built-ins. */
export function importLine(groups: string[], withWorkflows: boolean): string {
  const imports = groups.map((group) =>
    isBindingName(group) ? group : `${JSON.stringify(group)} as ${localName(group)}`,
  );
  imports.push("sleep", "waitForSignal", "webhook", ...(withWorkflows ? ["workflows"] : []), "ToolError");
  return `import { ${imports.join(", ")} } from "rewind:tools";`;
}

/** How a script names a tool: `group.tool`, or `group["a-tool"]` when the name is not an identifier. */
export function toolReference(group: string, name: string): string {
  return `${localName(group)}${isIdentifierName(name) ? `.${name}` : `[${JSON.stringify(name)}]`}`;
}

/** The first sentence of a description, on one line, cut near `length` characters. */
export function summarize(description: string | undefined, length = SUMMARY_LENGTH): string {
  const text =
    (description ?? "")
      .trim()
      .split(/\n\s*\n/)[0]
      ?.replace(/\s+/g, " ")
      .trim() ?? "";
  const sentence = /^(.+?[.!?])\s(?=\S)/.exec(text)?.[1] ?? text;
  if (sentence.length <= length) return sentence;
  const cut = sentence.slice(0, length - 1);
  const space = cut.lastIndexOf(" ");
  return `${space > length / 2 ? cut.slice(0, space) : cut}…`;
}

/** How a script refers to a group: its own name, or an alias when the name cannot be a binding. */
function localName(group: string): string {
  if (isBindingName(group)) return group;
  const alias = group.replace(/[^A-Za-z0-9_$]/g, "_");
  return isBindingName(alias) ? alias : `_${alias}`;
}

function toolLine(group: string, kind: "mcp" | "host", tool: PinnedTool, options: RenderOptions): string {
  const args = jsonSchemaToTs(tool.inputSchema, { style: "prompt" });
  const result = resultSchemaOf(group, kind, tool, options);
  const [first = "", ...rest] = descriptionParagraphs(tool.description);
  const note = result.observed === undefined ? "" : `${first ? " " : ""}${observedTag(result.observed)}`;
  const tail = first || note ? ` · ${first}${note}` : "";
  const signature = `${toolReference(group, tool.name)}(${args}) → ${jsonSchemaToTs(result.schema, { style: "prompt" })}${tail}`;
  const more = rest.flatMap((paragraph) => paragraph.split("\n").map((line) => `  ${line}`));
  const described = argumentDescriptions(tool.inputSchema).map(({ path, text }) => `  - ${path}: ${text}`);
  return [signature, ...more, ...described].join("\n");
}

/**
 * A description as the prompt shows it: its first paragraph on one line (it follows the call),
 * the others with their line breaks (lists stay lists), blank lines and trailing spaces gone.
 */
function descriptionParagraphs(description: string | undefined): string[] {
  let text = (description ?? "").trim();
  if (text.length > MAX_DESCRIPTION) text = `${text.slice(0, MAX_DESCRIPTION)}… (cut at ${MAX_DESCRIPTION} characters)`;
  const paragraphs = text
    .split(/\r?\n\s*\r?\n/)
    .map((paragraph) =>
      paragraph
        .split(/\r?\n/)
        .map((line) => line.trimEnd())
        .join("\n")
        .trim(),
    )
    .filter((paragraph) => paragraph.length > 0);
  const [first, ...rest] = paragraphs;
  return first === undefined ? [] : [first.replace(/\s+/g, " "), ...rest];
}

/**
 * What the input schema says of each argument and of the fields within (two levels down), as
 * `path: text`: the description, then the constraints and default (`(1–50, default 10)`, see
 * schema-notes.ts), followed through `$ref` as the type is. An argument with neither gets no line.
 */
function argumentDescriptions(inputSchema: unknown): { path: string; text: string }[] {
  const found: { path: string; text: string }[] = [];
  const notes = notesReader(inputSchema);
  const properties = new Map<object, [string, unknown][]>();
  let left = MAX_ARGUMENTS_READ;
  const visit = (schema: unknown, prefix: string, depth: number) => {
    for (const [key, property] of propertiesOf(notes(schema).shape, properties)) {
      if (found.length >= MAX_ARGUMENTS_DESCRIBED || --left < 0) return;
      const path = prefix ? `${prefix}.${key}` : key;
      const { description, constraints, shape } = notes(property);
      const text = describedLine(oneLine(description ?? ""), constraints);
      if (text) found.push({ path, text });
      if (depth >= 2 || !shape) continue;
      // The fields of an object argument, and of the objects in an array argument (`entities[].name`).
      if (isRecord(shape.items)) visit(shape.items, `${path}[]`, depth + 1);
      else visit(shape, path, depth + 1);
    }
  };
  visit(inputSchema, "", 0);
  return found;
}

/** A description on one line, cut past MAX_ARGUMENT_DESCRIPTION. */
function oneLine(description: string): string {
  const line = description
    .slice(0, 4 * MAX_ARGUMENT_DESCRIPTION)
    .replace(/\s+/g, " ")
    .trim();
  return line.length > MAX_ARGUMENT_DESCRIPTION ? `${line.slice(0, MAX_ARGUMENT_DESCRIPTION)}…` : line;
}

/** The `properties` of a schema, read once per rendering however many references lead to them. */
function propertiesOf(schema: unknown, read: Map<object, [string, unknown][]>): [string, unknown][] {
  if (!isRecord(schema) || !isRecord(schema["properties"])) return [];
  const properties = schema["properties"];
  let entries = read.get(properties);
  if (!entries) {
    entries = Object.entries(properties);
    read.set(properties, entries);
  }
  return entries;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function builtinLines(
  workflows: string[],
  allowedHosts: string[] | undefined,
  options: RenderOptions = {},
): string[] {
  const from = 'From "rewind":';
  const lines = [
    `sleep(duration: number | string) → void · ${from} pauses the run durably, in milliseconds or a string such as "2s" or "10 days".`,
    `waitForSignal(name, { timeout? }) → unknown · ${from} resolves with the payload of the signal \`name\` sent to this run; rejects with ToolError("timedOut") once a timeout passes.`,
    `webhook(name) → { url: string } · ${from} a URL bound to this run; what is posted to it becomes the signal \`name\`.`,
  ];
  for (const name of workflows) {
    const ref = isIdentifierName(name) ? `workflows.${name}` : `workflows[${JSON.stringify(name)}]`;
    // Like a tool's arguments: the type when the stored script declares one, else nothing to say.
    const input = workflowInputParameter(name, options);
    const type = promptTypeText(input.type) ?? input.type;
    const parameter = input.type === "unknown" ? "input?" : `input${input.optional ? "?" : ""}: ${type}`;
    lines.push(
      `${ref}.start(${parameter}) → { runId: string, result(): unknown } · ${from} starts the workflow \`${name}\` as a new run; \`result()\` waits for its result.`,
    );
    lines.push(
      `${ref}.signal(runId, signal, payload?) → void · ${from} sends a signal to a run of \`${name}\` started by this one.`,
    );
  }
  if (allowedHosts) {
    const hosts = allowedHosts.join(", ") || "none";
    lines.push(
      `fetch(url, init?: { method?, headers?, body? }) → Response · ${from} the only network, each request a journaled call; allowed hosts: ${hosts}.`,
    );
  }
  const codes = TOOL_ERROR_CODES.map((code) => JSON.stringify(code)).join(" | ");
  lines.push(
    `ToolError { code, tool, seq, message, details? } · ${from} what every failed call rejects with; code: ${codes}.`,
  );
  return lines;
}
