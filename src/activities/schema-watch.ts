/**
 * Checks a call against the MCP server's current schema before it is sent: a run keeps its
 * pinned toolset for life, but the server may have changed during a long pause. Listings are
 * cached briefly per connection, so a busy run does not list tools before every call.
 */
import type { McpPool, McpToolDescriptor } from "../mcp/index.ts";
import type { SchemaValidator } from "../sandbox/call-gate.ts";
import type { JsonSchema } from "../shared/toolset.ts";

export interface SchemaCheck {
  url: string;
  headers: Record<string, string>;
  poolKey: string;
  tool: string;
  args: unknown;
  validate: SchemaValidator;
}

export interface SchemaChange {
  message: string;
  /** The tool's current input schema, or null when the tool is gone. */
  current: JsonSchema | null;
}

export interface SchemaWatch {
  check(call: SchemaCheck): Promise<SchemaChange | undefined>;
}

/** Short: a run that slept through a change must see it on its next call. */
const TTL_MS = 2_000;

export function createSchemaWatch(pool: McpPool): SchemaWatch {
  const listings = new Map<string, { at: number; tools: Promise<McpToolDescriptor[]> }>();
  return {
    async check(call) {
      let listing = listings.get(call.poolKey);
      if (!listing || Date.now() - listing.at > TTL_MS) {
        listing = { at: Date.now(), tools: pool.listTools(call.url, call.headers, call.poolKey) };
        listings.set(call.poolKey, listing);
        listing.tools.catch(() => listings.delete(call.poolKey));
      }
      const tools = await listing.tools;
      const current = tools.find((t) => t.name === call.tool);
      if (!current) return { message: `the server no longer has the tool "${call.tool}"`, current: null };
      const problem = call.validate(current.inputSchema as JsonSchema, call.args);
      return problem ? { message: `the call no longer fits the tool's current schema: ${problem.message}`, current: current.inputSchema as JsonSchema } : undefined;
    },
  };
}
