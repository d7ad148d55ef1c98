/**
 * Code mode for agent frameworks: a connection to a toolset's MCP server in the Rewind API
 * (`/v1/toolsets/{id}/mcp`), whose four tools — search_tools, describe_tools, run_script, get_run —
 * a framework adapter (ai-sdk-tools.ts, openai-agents-tools.ts) hands to its model loop. The tools'
 * names, descriptions and input schemas are the server's own, listed once at connection: an
 * adapter shows a model exactly what an MCP client would see, and nothing here repeats them.
 */
import { END_USER_HEADER } from "../contract/index.ts";
import { openMcpConnection, type McpConnection } from "../mcp/index.ts";

export interface CodeModeOptions {
  /** The Rewind API's base URL, e.g. `http://127.0.0.1:8787`. */
  apiUrl: string;
  /** The toolset whose tools scripts import. */
  toolset: string;
  /** An API key of the namespace that owns the toolset (sent as a bearer token). */
  apiKey?: string | undefined;
  /** The end user runs act for (their credentials are used), when the toolset has per-user credentials. */
  endUser?: string | undefined;
  /** Bound of connecting and of each tool call's HTTP exchange. Default 60 000 ms. */
  timeoutMs?: number | undefined;
}

/** What a model reads of a tool's answer. */
export interface CodeModeAnswer {
  /** The tool failed in a way the model should read and act on (a type error, a failed run). */
  isError: boolean;
  /** The answer's text content, joined. */
  text: string;
  /** The answer as data, when the tool gives it. */
  structuredContent?: unknown;
}

export interface CodeModeTool {
  name: string;
  description: string;
  /** JSON Schema of the tool's arguments. */
  inputSchema: Record<string, unknown>;
  call(args: Record<string, unknown>, signal?: AbortSignal): Promise<CodeModeAnswer>;
}

export interface CodeModeConnection {
  /** The server's tools, in the order it lists them. */
  tools: CodeModeTool[];
  close(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 60_000;

function textOf(content: unknown[]): string {
  return content
    .map((block) =>
      typeof block === "object" && block !== null && (block as { type?: unknown }).type === "text"
        ? String((block as { text?: unknown }).text ?? "")
        : "",
    )
    .filter((text) => text !== "")
    .join("\n");
}

function toolOf(connection: McpConnection, timeoutMs: number) {
  return (descriptor: { name: string; description?: string; inputSchema: unknown }): CodeModeTool => ({
    name: descriptor.name,
    description: descriptor.description ?? "",
    inputSchema: (descriptor.inputSchema ?? { type: "object" }) as Record<string, unknown>,
    async call(args, signal) {
      const outcome = await connection.callTool({
        name: descriptor.name,
        arguments: args,
        meta: {},
        timeoutMs,
        ...(signal ? { signal } : {}),
      });
      return {
        isError: outcome.isError,
        text: textOf(outcome.content),
        ...(outcome.structuredContent === undefined ? {} : { structuredContent: outcome.structuredContent }),
      };
    },
  });
}

/**
 * Connects to the toolset's MCP server and lists its tools.
 *
 * @example
 * const codeMode = await connectCodeMode({ apiUrl: "http://127.0.0.1:8787", toolset: "ts_…", apiKey });
 * const answer = await codeMode.tools.find((t) => t.name === "run_script")?.call({ script });
 * await codeMode.close();
 */
export async function connectCodeMode(options: CodeModeOptions): Promise<CodeModeConnection> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const headers: Record<string, string> = {
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
    ...(options.endUser ? { [END_USER_HEADER]: options.endUser } : {}),
  };
  const url = `${options.apiUrl.replace(/\/+$/, "")}/v1/toolsets/${encodeURIComponent(options.toolset)}/mcp`;
  const connection = await openMcpConnection({ url, headers, timeoutMs });
  try {
    const listed = await connection.listTools({ timeoutMs });
    return { tools: listed.map(toolOf(connection, timeoutMs)), close: () => connection.close() };
  } catch (error) {
    await connection.close();
    throw error;
  }
}

/** What a framework gives its model as a tool's output: the data when there is some, else the text. */
export function modelOutputOf(answer: CodeModeAnswer): unknown {
  return answer.structuredContent ?? answer.text;
}
