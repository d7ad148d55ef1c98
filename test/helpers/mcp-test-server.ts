/**
 * A real MCP server for tests, built on the official SDK's low-level `Server` (so the test decides
 * the exact raw JSON Schemas and the `tools/list` pages) and its streamable HTTP transport over
 * node:http on 127.0.0.1. It records every tools/call with its `_meta` and headers, counts
 * sessions, and offers behaviour hooks: required credentials, canned HTTP answers, dropping a
 * call's connection, forgetting every session as a restarted server would.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const AnyResult = z.looseObject({});

export type HeaderMap = Record<string, string | undefined>;

export interface TestToolExtra {
  meta: Record<string, unknown>;
  headers: HeaderMap;
  /** 1 for the first call with this idempotency key (or of this tool, without a key), then 2… */
  attempt: number;
  /** Aborts when the client cancels the call or the session ends. */
  signal: AbortSignal;
  /** Destroys the socket of this call's HTTP request: the client sees the connection drop. */
  dropConnection(): void;
  /** Sends a log notification on this call's response stream (which starts the stream). */
  notify(text: string): Promise<void>;
  /** Sends `notifications/progress` for this call (only when the client gave a progressToken). */
  progress(progress: number, total?: number, message?: string): Promise<boolean>;
  /** Asks the client something (roots/list, sampling/createMessage, elicitation/create, ping) on this call's stream. */
  ask(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export interface TestToolDefinition {
  name: string;
  title?: string;
  description?: string;
  /** Raw JSON Schema, listed as is. */
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  handler(args: Record<string, unknown>, extra: TestToolExtra): Promise<CallToolResult>;
}

export interface RecordedCall {
  name: string;
  arguments: Record<string, unknown>;
  meta: Record<string, unknown>;
  headers: HeaderMap;
  sessionId: string | undefined;
}

export interface RequestInfo {
  /** The JSON-RPC method of a POST (`initialize`, `tools/call`…), else the HTTP method. */
  method: string;
  httpMethod: string;
  headers: HeaderMap;
  body: unknown;
}

export interface CannedResponse {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface StartMcpServerOptions {
  tools: TestToolDefinition[];
  /** Tools per tools/list page; default: all on one page. */
  pageSize?: number;
  onRequest?: (info: RequestInfo) => void;
  /** Awaited before a request is answered: a test holds a request in flight while it acts. */
  hold?: (info: RequestInfo) => Promise<void> | undefined;
  /** Answers the HTTP request itself when it returns a response (e.g. a 403 insufficient_scope). */
  intercept?: (info: RequestInfo) => CannedResponse | undefined;
  /** Answers 401 (with `WWW-Authenticate: Bearer`) unless the Authorization header is exactly this. */
  requiredAuthorization?: string;
  /** Listen on this port (to restart a server where clients expect it); default: any free port. */
  port?: number;
  /**
   * How a request for a session it does not know is answered: 404 as the spec says (default), or
   * 400 "No valid session ID provided" as the reference server and the SDK's examples do.
   */
  unknownSessionStatus?: 400 | 404;
  /** What tools/list answers a request with these headers (default: the tools as they are), e.g. a server that quotes them. */
  listedFor?: (tools: TestToolDefinition[], headers: HeaderMap) => TestToolDefinition[];
  /** Offer `tools.listChanged` (default true). */
  announcesToolChanges?: boolean;
}

export interface TestMcpServer {
  url: string;
  port: number;
  calls: RecordedCall[];
  stats: { initializeRequests: number; sessionsOpened: number; sessionsDeleted: number };
  setTools(tools: TestToolDefinition[]): void;
  /** Forgets every session (their requests now get 404), as a restarted server would. */
  dropSessions(): Promise<void>;
  /** Sends `notifications/tools/list_changed` to every session (on its standalone stream). */
  notifyToolsChanged(): Promise<void>;
  /** Answers a client's question: what `ask` resolved with, per method, in order. */
  asked: { method: string; answer?: Record<string, unknown>; error?: string }[];
  close(): Promise<void>;
}

function normalizeHeaders(headers: IncomingMessage["headers"]): HeaderMap {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(", ") : value]),
  );
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

const field = (value: unknown, name: string): unknown =>
  typeof value === "object" && value !== null && name in value ? (value as Record<string, unknown>)[name] : undefined;

function send(res: ServerResponse, response: CannedResponse): void {
  res.writeHead(response.status, response.headers ?? {});
  res.end(response.body ?? "");
}

export async function startMcpServer(options: StartMcpServerOptions): Promise<TestMcpServer> {
  let currentTools = options.tools;
  const calls: RecordedCall[] = [];
  const stats = { initializeRequests: 0, sessionsOpened: 0, sessionsDeleted: 0 };
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const sockets = new Map<string, Socket>();
  const attempts = new Map<string, number>();
  const asked: TestMcpServer["asked"] = [];
  const servers = new Set<Server>();

  function createSessionServer(): Server {
    const server = new Server(
      { name: "rewind-test-server", version: "1.0.0" },
      { capabilities: { tools: { listChanged: options.announcesToolChanges !== false }, logging: {} } },
    );
    server.onerror = () => undefined;
    servers.add(server);
    server.onclose = () => {
      servers.delete(server);
    };
    server.setRequestHandler(ListToolsRequestSchema, (request, extra) => {
      const tools = options.listedFor
        ? options.listedFor(currentTools, (extra.requestInfo?.headers ?? {}) as HeaderMap)
        : currentTools;
      const start = Number(request.params?.cursor ?? "0");
      if (!Number.isInteger(start) || start < 0 || start > tools.length)
        throw new McpError(ErrorCode.InvalidParams, "invalid cursor");
      const end = Math.min(tools.length, start + (options.pageSize ?? tools.length));
      // The SDK's types require `type: "object"` schemas; tests list raw schemas on purpose.
      const page = tools.slice(start, end).map(({ handler: _handler, ...listed }) => listed as unknown as Tool);
      return end < tools.length ? { tools: page, nextCursor: String(end) } : { tools: page };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const tool = currentTools.find((t) => t.name === request.params.name);
      const headers = (extra.requestInfo?.headers ?? {}) as HeaderMap;
      const meta = (request.params._meta ?? {}) as Record<string, unknown>;
      const args = request.params.arguments ?? {};
      calls.push({ name: request.params.name, arguments: args, meta, headers, sessionId: extra.sessionId });
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      const key =
        typeof meta["codes.rewind/idempotency-key"] === "string"
          ? meta["codes.rewind/idempotency-key"]
          : `tool:${tool.name}`;
      const attempt = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, attempt);
      const socketKey = `${extra.sessionId}:${String(extra.requestId)}`;
      return tool.handler(args, {
        meta,
        headers,
        attempt,
        signal: extra.signal,
        dropConnection: () => sockets.get(socketKey)?.destroy(),
        notify: (text) =>
          extra.sendNotification({ method: "notifications/message", params: { level: "info", data: text } }),
        progress: async (progress, total, message) => {
          const token = meta["progressToken"];
          if (typeof token !== "string" && typeof token !== "number") return false;
          await extra.sendNotification({
            method: "notifications/progress",
            params: {
              progressToken: token,
              progress,
              ...(total === undefined ? {} : { total }),
              ...(message === undefined ? {} : { message }),
            },
          });
          return true;
        },
        ask: async (method, params) => {
          try {
            const answer = await extra.sendRequest({ method, params: params ?? {} } as never, AnyResult);
            asked.push({ method, answer });
            return answer;
          } catch (error) {
            asked.push({ method, error: error instanceof Error ? error.message : String(error) });
            throw error;
          }
        },
      });
    });
    return server;
  }

  async function openSession(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
        stats.sessionsOpened++;
      },
      onsessionclosed: () => {
        stats.sessionsDeleted++;
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await createSessionServer().connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const headers = normalizeHeaders(req.headers);
    const httpMethod = req.method ?? "GET";
    const body = httpMethod === "POST" ? await readJson(req) : undefined;
    const rpcMethod = field(body, "method");
    const info: RequestInfo = {
      method: typeof rpcMethod === "string" ? rpcMethod : httpMethod,
      httpMethod,
      headers,
      body,
    };
    options.onRequest?.(info);
    await options.hold?.(info);
    const canned = options.intercept?.(info);
    if (canned) return send(res, canned);
    if (options.requiredAuthorization !== undefined && headers.authorization !== options.requiredAuthorization) {
      return send(res, {
        status: 401,
        headers: { "www-authenticate": 'Bearer realm="rewind-test"', "content-type": "application/json" },
        body: '{"error":"invalid_token"}',
      });
    }
    if (info.method === "initialize") stats.initializeRequests++;
    const sessionId = headers["mcp-session-id"];
    if (sessionId === undefined) {
      if (info.method === "initialize") return openSession(req, res, body);
      return send(res, {
        status: 400,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: no session" }, id: null }),
      });
    }
    const transport = sessions.get(sessionId);
    if (!transport && options.unknownSessionStatus === 400) {
      return send(res, {
        status: 400,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          error: { code: -32000, message: "Bad Request: No valid session ID provided" },
          id: null,
        }),
      });
    }
    if (!transport) {
      return send(res, {
        status: 404,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }),
      });
    }
    const id = field(body, "id");
    if (info.method === "tools/call" && id !== undefined) {
      const socketKey = `${sessionId}:${String(id)}`;
      sockets.set(socketKey, req.socket);
      res.once("close", () => sockets.delete(socketKey));
    }
    await transport.handleRequest(req, res, body);
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, { status: 500, body: String(error) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = http.address() as AddressInfo;

  async function dropSessions(): Promise<void> {
    const open = [...sessions.values()];
    sessions.clear();
    await Promise.all(open.map((transport) => transport.close().catch(() => undefined)));
  }

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    calls,
    stats,
    asked,
    setTools(next) {
      currentTools = next;
    },
    dropSessions,
    async notifyToolsChanged() {
      await Promise.all([...servers].map((server) => server.sendToolListChanged().catch(() => undefined)));
    },
    async close() {
      await dropSessions();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
