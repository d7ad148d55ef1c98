/**
 * The one file that talks to the official MCP SDK's client: it opens a connection (Client +
 * streamable HTTP transport) over an observed fetch, lists tools through every page, calls tools,
 * and turns whatever the SDK throws into McpConnectError / McpCallError with precise reasons.
 *
 * Requests go through `client.request` with lenient result schemas, not `client.listTools` /
 * `client.callTool`: `listTools` caches each tool's outputSchema and `callTool` then rejects a
 * result whose structuredContent does not match it (or lacks it), and the strict CallToolResult
 * schema rejects unknown content types. Whether a result fits a pinned schema is Rewind's
 * decision (schema-changed parking), not a transport error, so nothing is validated here.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { z } from "zod";
import { createObservedFetch, type ConnectionObservations } from "./http-observer.ts";
import { callError, connectError, type FailureContext } from "./mcp-failures.ts";
import { McpCallError, McpConnectError, describeUrl, secretsOf } from "./mcp-errors.ts";
import type { McpCallOutcome, McpCallRequest, McpToolDescriptor } from "./mcp-types.ts";
import { startDeadline, watched, type Deadline } from "./request-watch.ts";

const CLIENT_INFO = { name: "rewind", version: "0.1.0" };
/** The SDK's own request timer only backs up our deadline, which decides. */
const BACKSTOP_MS = 1_000;
/** How long closing waits for the server to acknowledge the end of the session. */
const TERMINATE_WAIT_MS = 1_000;

/** Accepts every output: also spares compiling an Ajv instance for each connection. */
const acceptAnyOutput: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

const JsonObject = z.record(z.string(), z.unknown());
const ListPage = z.looseObject({
  tools: z.array(z.looseObject({ name: z.string(), inputSchema: JsonObject })),
  nextCursor: z.string().nullish(),
});
const CallResult = z.looseObject({
  content: z.array(z.unknown()).default([]),
  structuredContent: z.unknown().optional(),
  isError: z.boolean().nullish(),
});

export interface OpenMcpConnectionOptions {
  url: string;
  /** Sent with every HTTP request of the connection. Never quoted in errors. */
  headers?: Record<string, string>;
  /** Bound of connecting and initializing. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** An initialized MCP session. Calls may run concurrently on it. */
export interface McpConnection {
  /** False once the transport closed; a pool drops it then. */
  readonly open: boolean;
  listTools(options: { timeoutMs: number; signal?: AbortSignal }): Promise<McpToolDescriptor[]>;
  /** `boundMs`: the timeout to name in a `timedOut` message when `timeoutMs` is what is left of it. */
  callTool(request: Pick<McpCallRequest, "name" | "arguments" | "meta" | "timeoutMs" | "signal"> & { boundMs?: number }): Promise<McpCallOutcome>;
  close(): Promise<void>;
}

interface InternalConnection extends McpConnection {
  listWithin(deadline: Deadline, boundMs: number): Promise<McpToolDescriptor[]>;
}

function describeTool(tool: z.infer<typeof ListPage>["tools"][number]): McpToolDescriptor {
  const descriptor: McpToolDescriptor = { name: tool.name, inputSchema: tool.inputSchema };
  if (typeof tool.title === "string") descriptor.title = tool.title;
  if (typeof tool.description === "string") descriptor.description = tool.description;
  const outputSchema = JsonObject.safeParse(tool.outputSchema);
  if (outputSchema.success) descriptor.outputSchema = outputSchema.data;
  const annotations = JsonObject.safeParse(tool.annotations);
  if (annotations.success) descriptor.annotations = annotations.data;
  return descriptor;
}

function asArguments(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  const parsed = JsonObject.safeParse(value);
  if (!parsed.success) throw new TypeError("MCP tool arguments must be a JSON object");
  return parsed.data;
}

async function open(options: OpenMcpConnectionOptions, deadline: Deadline, boundMs: number): Promise<InternalConnection> {
  const where = describeUrl(options.url);
  const endpoint = URL.canParse(options.url) ? new URL(options.url) : undefined;
  if (endpoint === undefined || (endpoint.protocol !== "http:" && endpoint.protocol !== "https:")) {
    throw new McpConnectError("unreachable", `${where}: an MCP server URL must be an absolute http(s) URL`, { url: where });
  }
  const observations: ConnectionObservations = {};
  const transport = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: options.headers ?? {} }, fetch: createObservedFetch(observations) });
  const client = new Client(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: acceptAnyOutput });
  let isOpen = true;
  client.onclose = () => { isOpen = false; };
  // Stream noise (a closed stream, an unknown response id) also reaches the request it concerns.
  client.onerror = () => undefined;
  const context: FailureContext = { where, secrets: secretsOf(options.headers, options.url), observations, boundMs, hasSession: () => transport.sessionId !== undefined, isOpen: () => isOpen };
  try {
    await watched(deadline, (signal) => client.connect(transport, { signal, timeout: deadline.remaining() + BACKSTOP_MS }));
  } catch (error) {
    await client.close().catch(() => undefined);
    throw connectError(error, context, "connect");
  }

  async function listWithin(listDeadline: Deadline, listBoundMs: number): Promise<McpToolDescriptor[]> {
    const listContext = { ...context, boundMs: listBoundMs };
    const tools: McpToolDescriptor[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    do {
      const params = cursor === undefined ? undefined : { cursor };
      const page = await watched(listDeadline, (signal) => client.request({ method: "tools/list", params }, ListPage, { signal, timeout: listDeadline.remaining() + BACKSTOP_MS }))
        .catch((error: unknown) => { throw connectError(error, listContext, "list"); });
      tools.push(...page.tools.map(describeTool));
      cursor = page.nextCursor ?? undefined;
      if (cursor !== undefined && cursors.has(cursor)) throw new McpConnectError("protocol", `${where} repeated the tools/list cursor "${cursor.slice(0, 40)}"`, { url: where });
      if (cursor !== undefined) cursors.add(cursor);
    } while (cursor !== undefined);
    return tools;
  }

  return {
    get open() { return isOpen; },
    listWithin,
    async listTools({ timeoutMs, signal }) {
      const listDeadline = startDeadline(timeoutMs, signal);
      try {
        return await listWithin(listDeadline, timeoutMs);
      } finally {
        listDeadline.dispose();
      }
    },
    async callTool({ name, arguments: args, meta, timeoutMs, signal, boundMs }) {
      // Closed under a caller that was waiting for it: nothing was sent, a new session may retry.
      if (!isOpen) throw new McpCallError("unreachable", `the connection to ${where} is closed`, { url: where, outcomeUnknown: false, sessionExpired: true });
      const callDeadline = startDeadline(timeoutMs, signal);
      try {
        const params = { name, arguments: asArguments(args), _meta: meta };
        const result = await watched(callDeadline, (abort) => client.request({ method: "tools/call", params }, CallResult, { signal: abort, timeout: callDeadline.remaining() + BACKSTOP_MS }));
        const outcome: McpCallOutcome = { kind: "result", isError: result.isError === true, content: result.content };
        if (result.structuredContent !== undefined) outcome.structuredContent = result.structuredContent;
        return outcome;
      } catch (error) {
        throw error instanceof McpCallError ? error : callError(error, { ...context, boundMs: boundMs ?? timeoutMs });
      } finally {
        callDeadline.dispose();
      }
    },
    async close() {
      if (isOpen && transport.sessionId !== undefined) {
        // Let the server forget the session, but never wait long for a server that hangs.
        let timer: NodeJS.Timeout | undefined;
        const gaveUp = new Promise<void>((resolve) => { timer = setTimeout(resolve, TERMINATE_WAIT_MS); });
        await Promise.race([transport.terminateSession().catch(() => undefined), gaveUp]);
        clearTimeout(timer);
      }
      await client.close().catch(() => undefined);
    },
  };
}

/**
 * Opens an initialized MCP session over streamable HTTP. Throws `McpConnectError`.
 *
 * @example
 * const connection = await openMcpConnection({ url: "http://127.0.0.1:3001/mcp", timeoutMs: 10_000 });
 */
export async function openMcpConnection(options: OpenMcpConnectionOptions): Promise<McpConnection> {
  const deadline = startDeadline(options.timeoutMs, options.signal);
  try {
    return await open(options, deadline, options.timeoutMs);
  } finally {
    deadline.dispose();
  }
}

export interface ListAllToolsOptions {
  url: string;
  headers?: Record<string, string>;
  /** Bound of connecting and listing every page. Default 10 000 ms. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Connects, lists every tool of the server (following `nextCursor` through all pages), and
 * closes the connection. Throws `McpConnectError` with a `reason`.
 *
 * @example
 * const tools = await listAllTools({ url: "http://127.0.0.1:3001/mcp", headers: { authorization: "Bearer …" } });
 */
export async function listAllTools(options: ListAllToolsOptions): Promise<McpToolDescriptor[]> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = startDeadline(timeoutMs, options.signal);
  try {
    const connection = await open({ ...options, timeoutMs }, deadline, timeoutMs);
    try {
      return await connection.listWithin(deadline, timeoutMs);
    } finally {
      await connection.close();
    }
  } finally {
    deadline.dispose();
  }
}
