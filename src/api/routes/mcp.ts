/**
 * `/v1/toolsets/{id}/mcp`: the toolset as an MCP server over streamable HTTP (POST for messages,
 * GET for a session's own stream, DELETE to end a session), served by the MCP front door. It is
 * authenticated and scoped like every route: the API key's namespace must own the toolset (404
 * otherwise), and its body is read only after that. The runs it starts may be an end user's,
 * named by the `X-Rewind-End-User` header or the `endUser` query parameter (not both), with the
 * rules of every other place an end user is named.
 */
import { Router, type Request } from "express";
import { z } from "zod";
import { END_USER_HEADER, TOOLSET_ID_PATTERN } from "../../contract/index.ts";
import type { ToolsetRegistry } from "../../toolsets/index.ts";
import { namespaceOf, principalOf } from "../auth.ts";
import type { FrontDoor } from "../front-door/index.ts";
import { HttpError, notFound } from "../http-error.ts";
import { endUserName } from "../schemas.ts";
import { parseOrThrow } from "../validate.ts";

export interface McpRouteDeps {
  toolsets: ToolsetRegistry;
  frontDoor: FrontDoor;
}

export const mcpQuery = z.strictObject({
  endUser: endUserName
    .optional()
    .describe(`The end user the runs started here are for (or the ${END_USER_HEADER} header)`),
});

/** The end user the request names, from its header or its query, checked as every end user is. */
function endUserOf(req: Request): string | undefined {
  const { endUser } = parseOrThrow(mcpQuery, req.query, "query");
  const header = req.get(END_USER_HEADER);
  if (header === undefined) return endUser;
  if (endUser !== undefined)
    throw new HttpError(400, "badRequest", `name the end user once: the ${END_USER_HEADER} header or ?endUser=`);
  const parsed = endUserName.safeParse(header);
  if (!parsed.success)
    throw new HttpError(400, "badRequest", `${END_USER_HEADER}: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  return parsed.data;
}

export function createMcpRouter(deps: McpRouteDeps): Router {
  const router = Router();

  async function serveMcp(req: Request<{ id: string }>, res: Parameters<FrontDoor["handle"]>[1]): Promise<void> {
    const namespace = namespaceOf(req);
    const endUser = endUserOf(req);
    const id = req.params.id;
    const toolset = TOOLSET_ID_PATTERN.test(id) ? await deps.toolsets.get(id, namespace) : undefined;
    if (!toolset) throw notFound(`toolset ${id}`);
    await deps.frontDoor.handle(req, res, { namespace, principal: principalOf(req), toolset, endUser });
  }

  router.post("/v1/toolsets/:id/mcp", serveMcp);
  router.get("/v1/toolsets/:id/mcp", serveMcp);
  router.delete("/v1/toolsets/:id/mcp", serveMcp);
  return router;
}
