/**
 * The official MCP SDK's server side, behind one file: a session is the SDK's `Server` on its
 * streamable HTTP transport (stateful: the client's answers to questions come back on requests of
 * their own, and must reach the request that asked). It declares tools and tasks (`tools/call`
 * as a task, `tasks/list`, `tasks/cancel`), lists the front door's four tools, and turns MCP
 * requests into calls of `SessionHandlers` and their answers back into MCP results:
 * - `tools/call`, plain or task-augmented (`startTask`: the task at once);
 * - the SDK's `tasks/get`, `tasks/list`, `tasks/cancel`, over a `TaskStore` whose every method
 *   asks the handlers, so Temporal keeps the tasks and this process keeps nothing;
 * - `tasks/result`, handled here rather than by the SDK, so that it can ask the client's user
 *   (elicitation, on the request's own stream, naming the task) while it waits.
 * A request whose client goes away is cancelled as if the client had said so, so nothing waits
 * for a reader that is gone.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type ElicitRequestFormParams,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  ProtocolRefusal,
  type Ask,
  type CallContext,
  type SessionHandlers,
  type ToolAnswer,
} from "./front-door-types.ts";

/** How long a question may wait for the client's user before it counts as unanswered. */
const ASK_TIMEOUT_MS = 10 * 60_000;
/** The `_meta` key of the text a host may give its model while a task runs (MCP 2025-11-25). */
const MODEL_IMMEDIATE_RESPONSE = "io.modelcontextprotocol/model-immediate-response";

export interface McpSession {
  /** Serves one HTTP request of the session (`body`: the parsed JSON, if any). */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
  /** Ends the session: its streams close and its requests still being handled are aborted. */
  close(): Promise<void>;
}

export interface McpSessionOptions {
  handlers: SessionHandlers;
  /** Rewind's version, in the answer to `initialize`. */
  version: string;
  /** Once the client's `initialize` is answered, with the session's id. */
  onOpened(id: string): void;
  /** Once the session ended, from either side. */
  onClosed(): void;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Whether a parsed body opens a session (an `initialize` request). */
export function isInitialize(body: unknown): boolean {
  return Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body);
}

/** A refusal of a request outside any session, worded as the SDK words its own. */
export function refuseRequest(res: ServerResponse, status: 400 | 404, message: string): void {
  const error = { code: status === 404 ? -32001 : -32000, message };
  res
    .writeHead(status, { "content-type": "application/json" })
    .end(JSON.stringify({ jsonrpc: "2.0", error, id: null }));
}

function toResult(answer: ToolAnswer): CallToolResult {
  return {
    content: [{ type: "text", text: answer.text }],
    ...(answer.structured ? { structuredContent: answer.structured } : {}),
    ...(answer.isError ? { isError: true } : {}),
  };
}

const REFUSAL_CODES = {
  invalidParams: ErrorCode.InvalidParams,
  methodNotFound: ErrorCode.MethodNotFound,
  internal: ErrorCode.InternalError,
} as const;

function toMcpError(error: unknown): unknown {
  return error instanceof ProtocolRefusal ? new McpError(REFUSAL_CODES[error.kind], error.message, error.data) : error;
}

/** `promise`, its refusal as an MCP error. */
const answered = <T>(promise: Promise<T>): Promise<T> =>
  promise.catch((error: unknown) => {
    throw toMcpError(error);
  });

/** The JSON-RPC ids of the requests a POST body carries. */
function requestIds(body: unknown): (string | number)[] {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.flatMap((m) => {
    if (typeof m !== "object" || m === null || !("method" in m) || !("id" in m)) return [];
    const id = (m as { id: unknown }).id;
    return typeof id === "string" || typeof id === "number" ? [id] : [];
  });
}

export async function openMcpSession(options: McpSessionOptions): Promise<McpSession> {
  const { handlers } = options;

  const taskStore: TaskStore = {
    createTask: () => Promise.reject(new Error("a task is a run: run_script starts it")),
    storeTaskResult: () => Promise.reject(new Error("a task's result is its run's")),
    getTask: async (taskId) => (await answered(handlers.tasks.get(taskId))) ?? null,
    // Asked only by the SDK's own tasks/result, which this session replaces (below).
    getTaskResult: () => Promise.reject(new Error("a task's result is answered by tasks/result")),
    updateTaskStatus: async (taskId, status) => {
      if (status !== "cancelled") throw new Error(`a task's status is its run's; it can only be cancelled`);
      await answered(handlers.tasks.cancel(taskId));
    },
    listTasks: (cursor) => answered(handlers.tasks.list(cursor)),
  };

  const server = new Server(
    { name: "rewind", version: options.version },
    {
      capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
    },
  );

  /** Asks the client's user, on the stream of the request `extra` serves; none when the client can't be asked. */
  function askerFor(extra: Extra, taskId?: string): Ask | undefined {
    if (server.getClientCapabilities()?.elicitation?.form === undefined) return undefined;
    return async (question) => {
      const params: ElicitRequestFormParams = {
        mode: "form",
        message: question.message,
        requestedSchema: question.requestedSchema as ElicitRequestFormParams["requestedSchema"],
        ...(taskId ? { _meta: { [RELATED_TASK_META_KEY]: { taskId } } } : {}),
      };
      // Not `elicitInput`: it would compile the schema (an MCP server's, untrusted) with ajv on this
      // thread. The run service checks the answer against it with Rewind's own validator.
      const answer = await server.request({ method: "elicitation/create", params }, ElicitResultSchema, {
        relatedRequestId: extra.requestId,
        signal: extra.signal,
        timeout: ASK_TIMEOUT_MS,
      });
      if (answer.action !== "accept") return { action: answer.action };
      return { action: "accept", content: answer.content ?? {} };
    };
  }

  /** Progress notifications on the request's stream, when it carried a token: each one counts up. */
  function progressFor(extra: Extra, token: string | number | undefined, taskId?: string): CallContext["progress"] {
    if (token === undefined) return undefined;
    let progress = 0;
    return (message) => {
      progress += 1;
      void extra
        .sendNotification({
          method: "notifications/progress",
          params: {
            progressToken: token,
            progress,
            message,
            ...(taskId ? { _meta: { [RELATED_TASK_META_KEY]: { taskId } } } : {}),
          },
        })
        .catch(() => undefined);
    };
  }

  function contextOf(extra: Extra, progressToken: string | number | undefined, taskId?: string): CallContext {
    const traceparent = extra.requestInfo?.headers["traceparent"];
    return {
      ask: askerFor(extra, taskId),
      signal: extra.signal,
      progress: progressFor(extra, progressToken, taskId),
      ...(typeof traceparent === "string" ? { traceparent } : {}),
    };
  }

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: handlers.tools as Tool[] }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args, task, _meta } = request.params;
    if (!task) return toResult(await answered(handlers.callTool(name, args, contextOf(extra, _meta?.progressToken))));
    const started = await answered(handlers.startTask(name, args, contextOf(extra, undefined)));
    return { task: started.task, _meta: { [MODEL_IMMEDIATE_RESPONSE]: started.note } };
  });

  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const { taskId, _meta } = request.params;
    const answer = await answered(handlers.tasks.result(taskId, contextOf(extra, _meta?.progressToken, taskId)));
    if (!answer) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
    const result = toResult(answer);
    return { ...result, _meta: { [RELATED_TASK_META_KEY]: { taskId } } };
  });

  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => options.onOpened(id),
  });
  server.onclose = () => options.onClosed();
  await server.connect(transport);

  return {
    async handle(req, res, body) {
      const ids = requestIds(body);
      if (ids.length > 0)
        res.once("close", () => {
          if (res.writableFinished) return;
          // The client went away before its answer: cancel its requests as its own notification would.
          for (const requestId of ids)
            transport.onmessage?.({
              jsonrpc: "2.0",
              method: "notifications/cancelled",
              params: { requestId, reason: "the client closed the connection" },
            });
        });
      await transport.handleRequest(req, res, body);
    },
    close: () => server.close(),
  };
}
