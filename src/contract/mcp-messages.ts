/**
 * The bodies of `/v1/toolsets/{id}/mcp` as the OpenAPI document describes them: JSON-RPC 2.0
 * messages of MCP (protocol 2025-11-25). The MCP SDK's server parses and answers them; these
 * schemas document the route, and its refusals: the API's own error before a session is reached
 * (key, toolset, body), a JSON-RPC error from the session's transport after.
 */
import { z } from "zod";
import { errorBody } from "./response-schemas.ts";

/** The header that names the end user a front door's session acts for (or `?endUser=`). */
export const END_USER_HEADER = "X-Rewind-End-User";

/** The methods a client sends the front door. */
export const MCP_METHODS = [
  "initialize",
  "notifications/initialized",
  "ping",
  "tools/list",
  "tools/call",
  "tasks/get",
  "tasks/result",
  "tasks/list",
  "tasks/cancel",
  "notifications/cancelled",
] as const;

export const mcpMessage = z
  .looseObject({
    jsonrpc: z.literal("2.0"),
    id: z.union([z.string(), z.number().int()]).optional().describe("Present on requests and responses"),
    method: z.enum(MCP_METHODS).optional().describe("Present on requests and notifications"),
    params: z.record(z.string(), z.unknown()).optional(),
    result: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("The client's answer to a question of the server's (elicitation)"),
  })
  .describe("A JSON-RPC 2.0 message of MCP: a request, a notification, or the answer to a server's request");

export const jsonRpcError = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number(), z.null()]),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
});

export const mcpRefusal = z
  .union([errorBody, jsonRpcError])
  .describe("The API's error (key, toolset, end user, body), or a JSON-RPC error of the MCP session");
