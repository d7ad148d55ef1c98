/**
 * Checks a call against the MCP server's current schema before it is sent: a run keeps its
 * pinned toolset for life, but the server may change under a long pause. Listing a server's
 * tools costs a round trip per page (a thousand tools are many pages), so a run's listing is
 * kept on its session and listed again only when it may be stale:
 * - the server said its tools changed (`notifications/tools/list_changed`), or the session it was
 *   listed on is gone (a new session after a restart or an idle close lists again);
 * - the run waited (sleep, signal, parked call, child) since it was listed — the workflow counts
 *   its waits and each call carries the count;
 * - it is older than a minute and the server does not announce changes;
 * - the server refused a call as invalid (JSON-RPC -32602, or -32601): its schema may have
 *   changed since it was listed, with no wait between (see `callMcpTool`).
 *
 * A run that has not waited yet may start from another run's opening listing (the first one made
 * on a session, before any call on it) of the same namespace, server and credentials, under the
 * same rules: a new session would list the same tools, so the round trip (a page per hundred
 * tools) is saved for every run but the first.
 */
import type { McpListing, McpPool, McpToolDescriptor } from "../mcp/index.ts";
import type { SchemaValidator } from "../sandbox/index.ts";
import type { JsonSchema } from "../shared/index.ts";

export interface SchemaCheck {
  url: string;
  headers: Record<string, string>;
  poolKey: string;
  tool: string;
  args: unknown;
  /** Waits the run has finished so far; a listing made before the last of them is stale. */
  waits: number;
  /** Namespace, server and credentials: runs with the same one may share an opening listing. */
  sharedKey?: string;
  validate: SchemaValidator;
}

export interface SchemaChange {
  message: string;
  /** The tool's current input schema, or null when the tool is gone. */
  current: JsonSchema | null;
}

export interface SchemaWatch {
  /** The tool as the server lists it now (from a listing that is not stale). */
  current(call: Omit<SchemaCheck, "args" | "validate">): Promise<McpToolDescriptor | undefined>;
  check(call: SchemaCheck): Promise<SchemaChange | undefined>;
  /** Drops what is kept of a listing, so that the next call of `poolKey` lists again. */
  forget(call: Pick<SchemaCheck, "poolKey" | "sharedKey">): void;
}

/** How a call no longer fits the tool as it is listed now, if it doesn't. */
export function schemaChangeOf(
  current: McpToolDescriptor | undefined,
  tool: string,
  args: unknown,
  validate: SchemaValidator,
): SchemaChange | undefined {
  if (!current) return { message: `the server no longer has the tool "${tool}"`, current: null };
  const problem = validate(current.inputSchema as JsonSchema, args);
  return problem
    ? {
        message: `the call no longer fits the tool's current schema: ${problem.message}`,
        current: current.inputSchema as JsonSchema,
      }
    : undefined;
}

/** Oldest listing used for a server that does not announce changes. */
export const MAX_LISTING_AGE_MS = 60_000;
/** Listings kept; past it, those too old to use anyway are dropped. */
const MAX_KEPT = 5_000;

interface Kept {
  listing: Promise<McpListing>;
  waits: number;
}

function stale(listing: McpListing, waits: number, keptWaits: number, now: number, maxAgeMs: number): boolean {
  if (!listing.fresh() || waits !== keptWaits) return true;
  return !listing.notifiesChanges && now - listing.listedAt > maxAgeMs;
}

export function createSchemaWatch(pool: McpPool, options: { maxAgeMs?: number } = {}): SchemaWatch {
  const maxAgeMs = options.maxAgeMs ?? MAX_LISTING_AGE_MS;
  const kept = new Map<string, Kept>();
  /** Opening listings, by `sharedKey`. */
  const opening = new Map<string, Promise<McpListing>>();

  function sweep(now: number): void {
    if (opening.size >= MAX_KEPT) opening.clear();
    if (kept.size < MAX_KEPT) return;
    for (const [key, entry] of kept) {
      void entry.listing.then(
        (listing) => {
          if (now - listing.listedAt > maxAgeMs && kept.get(key) === entry) kept.delete(key);
        },
        () => undefined,
      );
    }
  }

  async function listingFor(call: Omit<SchemaCheck, "args" | "validate">): Promise<McpListing> {
    const now = Date.now();
    const entry = kept.get(call.poolKey);
    if (entry) {
      const listing = await entry.listing.catch(() => undefined);
      if (listing && !stale(listing, call.waits, entry.waits, now, maxAgeMs)) return listing;
      if (kept.get(call.poolKey) !== entry) return listingFor(call);
    }
    const opens = !entry && call.waits === 0 && call.sharedKey !== undefined;
    if (opens) {
      const shared = opening.get(call.sharedKey ?? "");
      const listing = await shared?.catch(() => undefined);
      if (shared && listing && !stale(listing, 0, 0, now, maxAgeMs) && !kept.has(call.poolKey)) {
        kept.set(call.poolKey, { listing: shared, waits: 0 });
        return listing;
      }
      if (kept.has(call.poolKey)) return listingFor(call);
    }
    sweep(now);
    const fresh: Kept = {
      listing: pool.listTools(call.url, call.headers, call.poolKey, call.sharedKey),
      waits: call.waits,
    };
    kept.set(call.poolKey, fresh);
    if (opens) opening.set(call.sharedKey ?? "", fresh.listing);
    fresh.listing.catch(() => {
      if (kept.get(call.poolKey) === fresh) kept.delete(call.poolKey);
      if (opening.get(call.sharedKey ?? "") === fresh.listing) opening.delete(call.sharedKey ?? "");
    });
    return fresh.listing;
  }

  return {
    forget(call) {
      kept.delete(call.poolKey);
      if (call.sharedKey !== undefined) opening.delete(call.sharedKey);
    },
    async current(call) {
      const listing = await listingFor(call);
      return listing.tools.find((t: McpToolDescriptor) => t.name === call.tool);
    },
    async check(call) {
      const listing = await listingFor(call);
      return schemaChangeOf(
        listing.tools.find((t) => t.name === call.tool),
        call.tool,
        call.args,
        call.validate,
      );
    },
  };
}
