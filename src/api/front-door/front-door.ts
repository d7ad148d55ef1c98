/**
 * The MCP front door: each toolset is an MCP server at `/v1/toolsets/{id}/mcp`, whose four tools
 * let any MCP client find the toolset's tools and run scripts against them durably. This file
 * keeps the sessions: one per client `initialize`, bound to the scope it was opened with (the
 * API key's namespace and principal, the toolset, the end user), so a session id is refused
 * (404) under any other key, toolset or end user. Sessions live in the API process that opened
 * them; what they start lives in Temporal, so a client that lost its session opens another,
 * here or at another API process, and finds its runs and tasks there. A session nobody has used
 * for a while is closed, and a namespace holds a bounded number of them.
 *
 * One call, end to end: the route (routes/mcp.ts) authenticates and finds the toolset → `handle`
 * finds the session → the SDK's transport and server (mcp-server-sdk.ts) → a tool
 * (tool-calls.ts) → the API's run service → `followRun` (follow-run.ts) → the answer
 * (run-answers.ts).
 */
import type { Request, Response } from "express";
import packageJson from "../../../package.json" with { type: "json" };
import type { Logger } from "../../shared/index.ts";
import { temporalCallFailure } from "../../temporal/index.ts";
import { TEMPORAL_UNAVAILABLE_MESSAGE } from "../error-handler.ts";
import { HttpError } from "../http-error.ts";
import { ProtocolRefusal, type FrontDoorScope, type SessionHandlers, type ToolAnswer } from "./front-door-types.ts";
import { frontDoorTools } from "./front-door-tools.ts";
import { isInitialize, openMcpSession, refuseRequest, type McpSession } from "./mcp-server-sdk.ts";
import { createRunTasks } from "./run-tasks.ts";
import { SessionTable } from "./session-table.ts";
import { createToolCalls, type FrontDoorDeps } from "./tool-calls.ts";

export interface FrontDoor {
  /** Serves one request of `/v1/toolsets/{id}/mcp`, for a caller already authenticated into `scope`. */
  handle(req: Request, res: Response, scope: FrontDoorScope): Promise<void>;
  /** Ends every session: their streams close and the requests they were handling are aborted. */
  close(): Promise<void>;
}

export interface FrontDoorOptions extends FrontDoorDeps {
  logger: Logger;
  /** A session unused (no request open) for this long is closed. Default 10 minutes. */
  idleMs?: number;
  /** Sessions one namespace may hold at once; past it, its longest-idle one is closed. Default 500. */
  sessionsPerNamespace?: number;
}

const scopeKey = (scope: FrontDoorScope): string =>
  JSON.stringify([scope.namespace, scope.principal, scope.toolset.id, scope.endUser ?? null]);

/**
 * What Rewind's own code throws, as a client may read it: refusals as they are, Temporal being
 * unreachable as the API says it, anything else logged and told as an internal error. A request
 * the client cancelled gets no answer at all, so its error is left as it is.
 */
function guard(handlers: SessionHandlers, logger: Logger): SessionHandlers {
  const wording = (error: unknown): string => {
    if (error instanceof HttpError) return error.message;
    if (temporalCallFailure(error)) return TEMPORAL_UNAVAILABLE_MESSAGE;
    logger.error("MCP request failed", { error: error instanceof Error ? (error.stack ?? error.message) : error });
    return "internal error";
  };
  const refuse =
    (signal?: AbortSignal) =>
    (error: unknown): never => {
      if (error instanceof ProtocolRefusal || signal?.aborted) throw error;
      throw new ProtocolRefusal("internal", wording(error));
    };
  return {
    tools: handlers.tools,
    callTool: (name, args, context) =>
      handlers.callTool(name, args, context).catch((error: unknown): ToolAnswer => {
        if (error instanceof ProtocolRefusal || context.signal.aborted) throw error;
        return { isError: true, text: wording(error) };
      }),
    startTask: (name, args, context) => handlers.startTask(name, args, context).catch(refuse(context.signal)),
    tasks: {
      get: (taskId) => handlers.tasks.get(taskId).catch(refuse()),
      result: (taskId, context) => handlers.tasks.result(taskId, context).catch(refuse(context.signal)),
      list: (cursor) => handlers.tasks.list(cursor).catch(refuse()),
      cancel: (taskId) => handlers.tasks.cancel(taskId).catch(refuse()),
    },
  };
}

export function createFrontDoor(options: FrontDoorOptions): FrontDoor {
  const sessions = new SessionTable<McpSession>({
    idleMs: options.idleMs ?? 10 * 60_000,
    perNamespace: options.sessionsPerNamespace ?? 500,
  });
  const sweeper = setInterval(
    () => void sessions.sweep().catch(() => undefined),
    Math.min(options.idleMs ?? 60_000, 60_000),
  ).unref();

  const handlersFor = (scope: FrontDoorScope): SessionHandlers =>
    guard(
      {
        tools: frontDoorTools(scope.toolset),
        ...createToolCalls(options, scope),
        tasks: createRunTasks(options.runs, scope),
      },
      options.logger,
    );

  /** Opens a session for the client's `initialize`, and answers it. */
  async function open(req: Request, res: Response, scope: FrontDoorScope): Promise<void> {
    if (!(await sessions.makeRoom(scope.namespace)))
      throw new HttpError(503, "unavailable", "this namespace's MCP sessions are all in use; try again later");
    let opened: string | undefined;
    const session = await openMcpSession({
      handlers: handlersFor(scope),
      version: packageJson.version,
      onOpened(id) {
        opened = id;
        sessions.add(id, session, { scopeKey: scopeKey(scope), namespace: scope.namespace });
      },
      onClosed() {
        if (opened !== undefined) sessions.remove(opened);
      },
    });
    try {
      await session.handle(req, res, req.body);
    } finally {
      // An initialize the transport refused opened nothing.
      if (opened === undefined) await session.close();
    }
  }

  return {
    async handle(req, res, scope) {
      const id = req.get("mcp-session-id");
      if (id === undefined) {
        if (req.method === "POST" && isInitialize(req.body)) return open(req, res, scope);
        return refuseRequest(res, 400, "Bad Request: Mcp-Session-Id header is required");
      }
      const session = sessions.find(id, scopeKey(scope));
      if (!session) return refuseRequest(res, 404, "Session not found");
      res.once("close", sessions.begin(id));
      await session.handle(req, res, req.body);
    },

    async close() {
      clearInterval(sweeper);
      await sessions.closeAll();
    },
  };
}
