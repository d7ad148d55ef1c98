/**
 * The bench MCP server's larger tool lists: besides `echo` and `blob`, generated tools with a
 * small input schema each, so a server can offer 10 or 1,000 tools and the bench can show what
 * the size of a toolset costs at registration, in the type-checker and on each call. The server
 * picks the list by its URL path (`/mcp` the two tools, `/mcp/tools-<count>` a list of `count`).
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

const ENTITIES = ["issue", "ticket", "invoice", "order", "customer", "asset", "report", "alert", "job", "note"];
const VERBS = ["get", "list", "create", "update", "delete", "archive", "restore", "assign", "tag", "export"];

/** The n-th generated tool: a verb, an entity and a number, with a small object schema. */
export function generatedTool(index: number): Tool {
  const verb = VERBS[index % VERBS.length] ?? "get";
  const entity = ENTITIES[Math.floor(index / VERBS.length) % ENTITIES.length] ?? "item";
  return {
    name: `${verb}_${entity}_${String(index).padStart(4, "0")}`,
    description: `${verb[0]?.toUpperCase() ?? ""}${verb.slice(1)} a ${entity} (generated tool ${index}).`,
    inputSchema: {
      type: "object",
      properties: {
        id: { type: "string", description: `Id of the ${entity}.` },
        limit: { type: "integer", minimum: 1, maximum: 100 },
        tags: { type: "array", items: { type: "string" } },
      },
      required: ["id"],
    },
  };
}

/** `count` tools: the given ones first, then generated tools up to the count. */
export function toolList(base: Tool[], count: number): Tool[] {
  const tools = [...base];
  for (let i = 0; tools.length < count; i++) tools.push(generatedTool(i));
  return tools;
}

const SIZED_PATH = /^\/mcp\/tools-(\d{1,5})$/;

/** How many tools a path asks for (`/mcp/tools-1000`), or undefined for the plain `/mcp`. */
export function toolCountOf(pathname: string): number | undefined {
  const match = SIZED_PATH.exec(pathname);
  return match ? Math.min(Number(match[1]), 10_000) : undefined;
}
