/**
 * Renders a pinned toolset as the compact text a model reads before writing a script: the
 * import line it should copy, then one line per tool and per built-in. Every token spent here
 * is spent on every prompt, so types are single-line and descriptions cut to their first
 * sentence; the .d.ts keeps the full text for the type-checker.
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
import { promptTypeText } from "./type-text.ts";
import type { RenderOptions } from "./render-dts.ts";

const SUMMARY_LENGTH = 200;

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
  const summary = summarize(tool.description);
  const note = result.observed === undefined ? "" : `${summary ? " " : ""}${observedTag(result.observed)}`;
  const tail = summary || note ? ` · ${summary}${note}` : "";
  return `${toolReference(group, tool.name)}(${args}) → ${jsonSchemaToTs(result.schema, { style: "prompt" })}${tail}`;
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
