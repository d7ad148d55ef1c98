/**
 * Renders a pinned toolset as the .d.ts of the module `rewind:tools`, which the type-checker
 * reads before a run starts. The text is an ambient script file: the module block holds the
 * groups and built-ins, and when the toolset enables `http` a global `fetch` sits beside it, as
 * it does in the sandbox.
 */
import { isReservedWord, scalarsAsText, TOOL_ERROR_CODES, listToolGroups } from "../shared/index.ts";
import type { JsonSchema, PinnedTool, PinnedToolset } from "../shared/index.ts";
import { formatJsDoc, isIdentifierName, jsonSchemaToTs, propertyKey } from "./json-schema-to-ts.ts";
import { acceptsUndefined, parseTypeText } from "./type-text.ts";

/** The shape of a tool's recorded results, inferred elsewhere, for tools that declare none. */
export interface ObservedResult {
  schema: JsonSchema;
  /** How many recorded results the shape was merged from. */
  count: number;
}

export interface RenderOptions {
  /** Observed result shapes by qualified tool name (`group.tool`); ignored where an outputSchema exists. */
  observed?: Record<string, ObservedResult>;
  /**
   * Render only these tools (qualified names, `group.tool`), and only the groups holding one; the
   * built-ins always. Default: every tool. Type-checks always read the full declarations.
   */
  tools?: ReadonlySet<string>;
  /**
   * The input type each pinned workflow's stored script declares, by the name scripts use, as
   * TypeScript text. Default: none, and every workflow takes `unknown`. Text that is not one
   * plain type (see type-text.ts) renders as `unknown` too.
   */
  workflowInputs?: Readonly<Record<string, string>>;
}

/** How `workflows.<name>.start` takes its input: `input?: unknown`, `input: T`, or `input?: T` when T takes undefined. */
export function workflowInputParameter(name: string, options: RenderOptions): { optional: boolean; type: string } {
  const text = Object.hasOwn(options.workflowInputs ?? {}, name) ? options.workflowInputs?.[name] : undefined;
  const node = text === undefined ? undefined : parseTypeText(text);
  if (text === undefined || !node) return { optional: true, type: "unknown" };
  return { optional: acceptsUndefined(node), type: text };
}

/** Whether `name` can be an exported binding (`export const name`), not only a property name. */
export function isBindingName(name: string): boolean {
  return isIdentifierName(name) && !isReservedWord(name);
}

/**
 * How a script gets the result of an MCP tool without an output schema (`resultValue`, sandbox
 * runtime 3), said beside every such tool in the .d.ts and once in the prompt.
 */
export const UNDECLARED_MCP_RESULT =
  "the result is the server's structuredContent if sent; else, for a single text block, its JSON parsed if the text is a JSON " +
  "object or array, and the text itself (a string, even for a number) otherwise; else the content blocks.";

/**
 * The schema a tool's result type comes from, and whether it was observed rather than declared.
 * An MCP tool's observed shape is read by today's rule (`scalarsAsText`): shapes recorded under
 * the rule of runtimes 1–2 may say number where today's scripts get the text.
 */
export function resultSchemaOf(
  group: string,
  kind: "mcp" | "host",
  tool: PinnedTool,
  options: RenderOptions,
): { schema: unknown; observed?: number } {
  if (tool.outputSchema !== undefined) return { schema: tool.outputSchema };
  const seen = options.observed?.[`${group}.${tool.name}`];
  if (!seen) return { schema: true };
  return { schema: kind === "mcp" ? scalarsAsText(seen.schema) : seen.schema, observed: seen.count };
}

/** A tool whose arguments require nothing may be called with none. */
export function argsAreOptional(inputSchema: unknown): boolean {
  if (typeof inputSchema !== "object" || inputSchema === null) return true;
  const schema = inputSchema as Record<string, unknown>;
  const own = Array.isArray(schema.required) && schema.required.length > 0;
  const inAllOf = Array.isArray(schema.allOf) && (schema.allOf as unknown[]).some((s) => !argsAreOptional(s));
  return !own && !inAllOf;
}

/** The toolset's groups in rendering order, narrowed to `options.tools` when it is given. */
export function renderedGroups(toolset: PinnedToolset, options: RenderOptions): ReturnType<typeof listToolGroups> {
  const groups = listToolGroups(toolset);
  const chosen = options.tools;
  if (!chosen) return groups;
  return groups
    .map((g) => ({ ...g, tools: g.tools.filter((tool) => chosen.has(`${g.group}.${tool.name}`)) }))
    .filter((g) => g.tools.length > 0);
}

export function observedTag(count: number): string {
  return `@observed from ${count} result${count === 1 ? "" : "s"}`;
}

export function renderDts(toolset: PinnedToolset, options: RenderOptions = {}): string {
  const body: string[] = [];
  renderedGroups(toolset, options).forEach(({ group, kind, tools }, i) => {
    const title =
      kind === "mcp" ? `Tools of the MCP server \`${group}\`.` : `Host tools of the harness, group \`${group}\`.`;
    const methods = tools.map((tool) => `${renderMethod(group, kind, tool, options)}\n`).join("");
    const doc = formatJsDoc(title, "  ");
    if (isBindingName(group)) {
      body.push(`${doc}\n  export const ${group}: {\n${methods}  };`);
    } else {
      // A name such as `file-system` cannot be a binding: export it under a string name instead.
      body.push(
        `${doc}\n  const __group${i}: {\n${methods}  };\n  export { __group${i} as ${JSON.stringify(group)} };`,
      );
    }
  });
  body.push(BUILTINS);
  const workflows = Object.keys(toolset.workflows);
  if (workflows.length > 0) body.push(renderWorkflows(workflows, options));
  const module = `declare module "rewind:tools" {\n${body.join("\n\n")}\n}\n`;
  // What an MCP tool without an output schema resolves to is said once, not on every such tool.
  const undeclared = renderedGroups(toolset, options).some(
    ({ kind, tools }) => kind === "mcp" && tools.some((tool) => tool.outputSchema === undefined),
  );
  const header =
    '// Declarations of the module "rewind:tools", generated by Rewind from a pinned toolset.\n' +
    (undeclared ? `// An MCP tool without an output schema: ${UNDECLARED_MCP_RESULT}\n` : "");
  return header + module + (toolset.http ? `\n${renderFetch(toolset.http.allowedHosts)}` : "");
}

function renderMethod(group: string, kind: "mcp" | "host", tool: PinnedTool, options: RenderOptions): string {
  const indent = "    ";
  const result = resultSchemaOf(group, kind, tool, options);
  const doc = [tool.description?.trim(), result.observed === undefined ? undefined : observedTag(result.observed)];
  const docText = doc.filter(Boolean).join("\n");
  const args = jsonSchemaToTs(tool.inputSchema, { indent });
  const resultType = jsonSchemaToTs(result.schema, { indent });
  const optional = argsAreOptional(tool.inputSchema) ? "?" : "";
  const line = `${indent}${propertyKey(tool.name)}(args${optional}: ${args}): Promise<${resultType}>;`;
  return docText ? `${formatJsDoc(docText, indent)}\n${line}` : line;
}

function renderWorkflows(names: string[], options: RenderOptions): string {
  const shape = (name: string) => {
    const input = workflowInputParameter(name, options);
    return `{ start(input${input.optional ? "?" : ""}: ${input.type}): Promise<{ runId: string; result(): Promise<unknown> }>; signal(runId: string, signal: string, payload?: unknown): Promise<void> }`;
  };
  const members = names.map((name) => `    ${propertyKey(name)}: ${shape(name)};\n`).join("");
  return `  /** Workflows this toolset lets a script start as new runs, and signal once started. */\n  export const workflows: {\n${members}  };`;
}

function renderFetch(allowedHosts: string[]): string {
  const hosts = allowedHosts.map((h) => `\`${h}\``).join(", ") || "none";
  return `${formatJsDoc("A response of the script's `fetch`, whose body has already been read in full.", "")}
interface RewindResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly url: string;
  readonly redirected: boolean;
  readonly headers: Record<string, string>;
  /** "base64" when the body is not text: text() then answers the bytes in base64. */
  readonly bodyEncoding: "utf8" | "base64";
  text(): Promise<string>;
  json(): Promise<unknown>;
}

${formatJsDoc(`The script's only network: each request is a journaled call of the \`http\` tool.\nAllowed hosts: ${hosts}.`, "")}
declare function fetch(url: string, init?: { method?: string; headers?: Record<string, string>; body?: string }): Promise<RewindResponse>;
`;
}

const BUILTINS = `  /** Pauses the run durably (a Temporal timer); survives restarts. Milliseconds or a string such as "2s", "10 days". */
  export function sleep(duration: number | string): Promise<void>;

  /** Waits for the signal \`name\` sent to this run; rejects with ToolError("timedOut") after \`timeout\` if given. */
  export function waitForSignal<T = unknown>(name: string, options?: { timeout?: number | string }): Promise<T>;

  /** A URL bound to this run: what is POSTed to it becomes the signal \`name\`. */
  export function webhook(name: string): Promise<{ url: string }>;

  /** Why a call failed. */
  export type ToolErrorCode = ${TOOL_ERROR_CODES.map((code) => JSON.stringify(code)).join(" | ")};

  /** What every failed call, built-ins included, rejects with. */
  export class ToolError extends Error {
    readonly code: ToolErrorCode;
    /** Qualified name of the tool, e.g. \`github.list_issues\` or \`rewind.sleep\`. */
    readonly tool: string;
    /** Position of the call in the run's journal. */
    readonly seq: number;
    readonly details?: unknown;
  }`;
