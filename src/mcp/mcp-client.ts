/**
 * The one file that talks to the official MCP SDK's client: it opens a connection (Client +
 * streamable HTTP transport) over an observed fetch, lists tools through every page, calls tools,
 * and turns whatever the SDK throws into McpConnectError / McpCallError with precise reasons.
 * With an outbound target policy, the transport's fetch is the policy's session: the server's
 * name is resolved once per connection, its addresses checked and its sockets pinned to them.
 *
 * Requests go through `client.request` with lenient result schemas, not `client.listTools` /
 * `client.callTool`: `listTools` caches each tool's outputSchema and `callTool` then rejects a
 * result whose structuredContent does not match it (or lacks it), and the strict CallToolResult
 * schema rejects unknown content types. Whether a result fits a pinned schema is Rewind's
 * decision (schema-changed parking), not a transport error, so nothing is validated here.
 *
 * What a server asks of the client is answered at once: `ping` (by the SDK), `roots/list` with no
 * roots, sampling with a JSON-RPC error (there is no model here); an elicitation goes to the call
 * it belongs to (call-slots.ts), which parks its run until the harness answers.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { z } from "zod";
import type { TargetPolicy } from "../http-tool/index.ts";
import { CallSlots, callScope } from "./call-slots.ts";
import { createObservedFetch, type ConnectionObservations } from "./http-observer.ts";
import { callError, connectError, type FailureContext } from "./mcp-failures.ts";
import { McpCallError, McpConnectError, describeUrl } from "./mcp-errors.ts";
import { scrubberFor } from "./secret-scrubber.ts";
import type {
  McpCallHooks,
  McpCallOutcome,
  McpCallRequest,
  McpElicitationAnswer,
  McpToolDescriptor,
} from "./mcp-types.ts";
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

/** What Rewind can do for a server: say it has no roots, and put a form to the harness. */
const CLIENT_CAPABILITIES = { roots: {}, elicitation: { form: {} } };

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
const TaskSupport = z.looseObject({ taskSupport: z.enum(["forbidden", "optional", "required"]).optional() });
const TaskStatus = z.enum(["working", "input_required", "completed", "failed", "cancelled"]);
const TaskState = z.looseObject({
  taskId: z.string(),
  status: TaskStatus,
  statusMessage: z.string().nullish(),
  pollInterval: z.number().nullish(),
});
const CreatedTask = z.looseObject({ task: TaskState });
const Empty = z.looseObject({});

/** The server's view of a task, as `tasks/get` (or creating it) tells. */
export type McpTaskState = z.infer<typeof TaskState>;

function outcomeOf(result: z.infer<typeof CallResult>): McpCallOutcome {
  const outcome: McpCallOutcome = { kind: "result", isError: result.isError === true, content: result.content };
  if (result.structuredContent !== undefined) outcome.structuredContent = result.structuredContent;
  return outcome;
}

export interface OpenMcpConnectionOptions {
  url: string;
  /** Sent with every HTTP request of the connection. Never quoted in errors. */
  headers?: Record<string, string>;
  /** Bound of connecting and initializing. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Join this existing session instead of opening one (a task an earlier attempt started). */
  sessionId?: string;
  /**
   * The outbound target policy every HTTP request of the connection goes through (addresses
   * checked, sockets pinned, redirects checked again). Default: none, a plain fetch.
   */
  targets?: TargetPolicy | undefined;
}

type CallParts = Pick<McpCallRequest, "name" | "arguments" | "meta" | "timeoutMs" | "signal" | "hooks"> & {
  boundMs?: number;
};
type TaskRequestOptions = {
  timeoutMs: number;
  boundMs?: number;
  signal?: AbortSignal | undefined;
  hooks?: McpCallHooks | undefined;
};

/** An initialized MCP session. Calls may run concurrently on it. */
export interface McpConnection {
  /** False once the transport closed; a pool drops it then. */
  readonly open: boolean;
  readonly sessionId: string | undefined;
  /** The server offers `notifications/tools/list_changed`. */
  readonly notifiesToolChanges: boolean;
  /** Goes up each time the server says its tools changed. */
  readonly toolChanges: number;
  listTools(options: { timeoutMs: number; signal?: AbortSignal }): Promise<McpToolDescriptor[]>;
  /** `boundMs`: the timeout to name in a `timedOut` message when `timeoutMs` is what is left of it. */
  callTool(request: CallParts): Promise<McpCallOutcome>;
  /** `tools/call` as a task: resolves once the server created it. */
  startTask(request: CallParts & { ttlMs?: number | undefined }): Promise<McpTaskState>;
  getTask(taskId: string, options: TaskRequestOptions): Promise<McpTaskState>;
  /** `tasks/result`: waits for the task to end (answering its questions) and returns its result. */
  taskResult(taskId: string, options: TaskRequestOptions): Promise<McpCallOutcome>;
  cancelTask(taskId: string, options: TaskRequestOptions): Promise<void>;
  close(options?: { keepSession?: boolean }): Promise<void>;
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
  const taskSupport = TaskSupport.safeParse(tool.execution);
  if (taskSupport.success && taskSupport.data.taskSupport) descriptor.taskSupport = taskSupport.data.taskSupport;
  return descriptor;
}

function asArguments(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  const parsed = JsonObject.safeParse(value);
  if (!parsed.success) throw new TypeError("MCP tool arguments must be a JSON object");
  return parsed.data;
}

/**
 * Tells the call that sends a `tools/call` request (`onSent`) which exchange it went out on: the
 * SDK numbers requests itself, and the request is sent in the call's async context (call-slots).
 */
function tellSent(transport: StreamableHTTPClientTransport): void {
  const send = transport.send.bind(transport);
  transport.send = (message, sendOptions) => {
    if ("method" in message && message.method === "tools/call" && "id" in message) {
      callScope.getStore()?.hooks.onSent?.({
        requestId: String(message.id),
        sessionId: transport.sessionId,
        protocolVersion: transport.protocolVersion,
      });
    }
    return send(message, sendOptions);
  };
}

async function open(
  options: OpenMcpConnectionOptions,
  deadline: Deadline,
  boundMs: number,
): Promise<InternalConnection> {
  const where = describeUrl(options.url);
  const endpoint = URL.canParse(options.url) ? new URL(options.url) : undefined;
  if (endpoint === undefined || (endpoint.protocol !== "http:" && endpoint.protocol !== "https:")) {
    throw new McpConnectError("unreachable", `${where}: an MCP server URL must be an absolute http(s) URL`, {
      url: where,
    });
  }
  const observations: ConnectionObservations = {};
  const dialer = options.targets?.session();
  const transport = new StreamableHTTPClientTransport(endpoint, {
    requestInit: { headers: options.headers ?? {} },
    fetch: createObservedFetch(observations, dialer?.fetch),
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
  });
  tellSent(transport);
  const client = new Client(CLIENT_INFO, { capabilities: CLIENT_CAPABILITIES, jsonSchemaValidator: acceptAnyOutput });
  const slots = new CallSlots();
  let isOpen = true;
  let toolChanges = 0;
  client.onclose = () => {
    isOpen = false;
  };
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [] }));
  client.setRequestHandler(ElicitRequestSchema, async (request, extra): Promise<McpElicitationAnswer> => {
    const params = request.params;
    if (params.mode === "url")
      throw new McpError(ErrorCode.InvalidParams, "this client takes form elicitations only, not URL ones");
    const slot = slots.current((hooks) => hooks.onElicitation !== undefined);
    if (!slot?.hooks.onElicitation)
      throw new McpError(ErrorCode.InvalidRequest, "no tool call of this session is waiting for an answer");
    return await slot.hooks.onElicitation(
      scrubber.value({ message: params.message, requestedSchema: params.requestedSchema as Record<string, unknown> }),
      extra.signal,
    );
  });
  client.fallbackRequestHandler = (request) => {
    const why =
      request.method === "sampling/createMessage"
        ? "Rewind runs scripts without a model, so it can't sample"
        : "this client does not serve that method";
    return Promise.reject(new McpError(ErrorCode.MethodNotFound, `${request.method} is not supported: ${why}`));
  };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    toolChanges++;
  });
  // Stream noise (a closed stream, an unknown response id) also reaches the request it concerns.
  client.onerror = () => undefined;
  // Everything the server sends is scrubbed of the credentials it was sent, here where it arrives.
  const scrubber = scrubberFor(options.headers, options.url);
  const context: FailureContext = {
    where,
    scrubber,
    observations,
    boundMs,
    hasSession: () => transport.sessionId !== undefined,
    isOpen: () => isOpen,
  };
  try {
    await watched(deadline, (signal) =>
      client.connect(transport, { signal, timeout: deadline.remaining() + BACKSTOP_MS }),
    );
  } catch (error) {
    await client.close().catch(() => undefined);
    await dialer?.close();
    throw connectError(error, context, "connect");
  }

  async function listWithin(listDeadline: Deadline, listBoundMs: number): Promise<McpToolDescriptor[]> {
    const listContext = { ...context, boundMs: listBoundMs };
    const tools: McpToolDescriptor[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    do {
      const params = cursor === undefined ? undefined : { cursor };
      const page = await watched(listDeadline, (signal) =>
        client.request({ method: "tools/list", params }, ListPage, {
          signal,
          timeout: listDeadline.remaining() + BACKSTOP_MS,
        }),
      ).catch((error: unknown) => {
        throw connectError(error, listContext, "list");
      });
      tools.push(...page.tools.map((tool) => scrubber.value(describeTool(tool))));
      cursor = page.nextCursor ?? undefined;
      if (cursor !== undefined && cursors.has(cursor))
        throw new McpConnectError("protocol", `${where} repeated the tools/list cursor "${cursor.slice(0, 40)}"`, {
          url: where,
        });
      if (cursor !== undefined) cursors.add(cursor);
    } while (cursor !== undefined);
    return tools;
  }

  function send<T>(
    deadline: Deadline,
    parts: { hooks?: McpCallHooks | undefined },
    method: string,
    params: Record<string, unknown>,
    schema: z.ZodType<T>,
    extra: { task?: { ttl?: number } } = {},
  ): Promise<T> {
    const onProgress = parts.hooks?.onProgress;
    return slots.run(parts.hooks, () =>
      watched(deadline, (abort) =>
        client.request({ method, params }, schema, {
          signal: abort,
          timeout: deadline.remaining() + BACKSTOP_MS,
          ...(onProgress
            ? {
                onprogress: (p: { progress: number; total?: number; message?: string }) =>
                  onProgress({
                    progress: p.progress,
                    ...(p.total === undefined ? {} : { total: p.total }),
                    ...(p.message === undefined ? {} : { message: scrubber.text(p.message) }),
                  }),
              }
            : {}),
          ...extra,
        }),
      ),
    );
  }

  async function bounded<T>(options: TaskRequestOptions, run: (deadline: Deadline) => Promise<T>): Promise<T> {
    if (!isOpen)
      throw new McpCallError("unreachable", `the connection to ${where} is closed`, {
        url: where,
        outcomeUnknown: false,
        sessionExpired: true,
      });
    const deadline = startDeadline(options.timeoutMs, options.signal);
    try {
      return await run(deadline);
    } catch (error) {
      throw error instanceof McpCallError
        ? error
        : callError(error, { ...context, boundMs: options.boundMs ?? options.timeoutMs });
    } finally {
      deadline.dispose();
    }
  }

  return {
    get open() {
      return isOpen;
    },
    get sessionId() {
      return transport.sessionId;
    },
    get notifiesToolChanges() {
      return client.getServerCapabilities()?.tools?.listChanged === true;
    },
    get toolChanges() {
      return toolChanges;
    },
    listWithin,
    async listTools({ timeoutMs, signal }) {
      const listDeadline = startDeadline(timeoutMs, signal);
      try {
        return await listWithin(listDeadline, timeoutMs);
      } finally {
        listDeadline.dispose();
      }
    },
    // Closed under a caller that was waiting for it: nothing was sent, a new session may retry.
    callTool: (parts) =>
      bounded(parts, async (deadline) => {
        const params = { name: parts.name, arguments: asArguments(parts.arguments), _meta: parts.meta };
        return scrubber.value(outcomeOf(await send(deadline, parts, "tools/call", params, CallResult)));
      }),
    startTask: (parts) =>
      bounded(parts, async (deadline) => {
        const params = { name: parts.name, arguments: asArguments(parts.arguments), _meta: parts.meta };
        const created = await send(deadline, parts, "tools/call", params, CreatedTask, {
          task: parts.ttlMs === undefined ? {} : { ttl: parts.ttlMs },
        });
        return scrubber.value(created.task);
      }),
    getTask: (taskId, options) =>
      bounded(options, async (deadline) =>
        scrubber.value(await send(deadline, options, "tasks/get", { taskId }, TaskState)),
      ),
    taskResult: (taskId, options) =>
      bounded(options, async (deadline) =>
        scrubber.value(outcomeOf(await send(deadline, options, "tasks/result", { taskId }, CallResult))),
      ),
    cancelTask: (taskId, options) =>
      bounded(options, async (deadline) => {
        await send(deadline, options, "tasks/cancel", { taskId }, Empty);
      }),
    async close(closeOptions) {
      if (isOpen && transport.sessionId !== undefined && closeOptions?.keepSession !== true) {
        // Let the server forget the session, but never wait long for a server that hangs.
        let timer: NodeJS.Timeout | undefined;
        const gaveUp = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, TERMINATE_WAIT_MS);
        });
        await Promise.race([transport.terminateSession().catch(() => undefined), gaveUp]);
        clearTimeout(timer);
      }
      await client.close().catch(() => undefined);
      await dialer?.close();
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
  /** The outbound target policy (see OpenMcpConnectionOptions). Default: none. */
  targets?: TargetPolicy | undefined;
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
