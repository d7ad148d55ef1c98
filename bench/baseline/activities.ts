/**
 * The baseline's plain activity: a single MCP tool call through the same connection pool
 * Rewind's `callMcpTool` uses (`createMcpPool`), with the same idempotency key in `_meta` and
 * the same per-request timeout, and nothing else — no journal, no failure mapping. A no-op
 * activity beside it measures Temporal's own floor per call.
 */
import { resultValue, type McpPool } from "../../src/mcp/index.ts";

export interface PlainCallInput {
  url: string;
  tool: string;
  args: Record<string, unknown>;
  key: string;
}

const TIMEOUT_MS = 5 * 60_000;

export function createPlainActivities(pool: McpPool) {
  return {
    async plainCallTool(input: PlainCallInput): Promise<unknown> {
      const outcome = await pool.callTool({
        url: input.url,
        poolKey: input.url,
        name: input.tool,
        arguments: input.args,
        meta: { "codes.rewind/idempotency-key": input.key },
        timeoutMs: TIMEOUT_MS,
      });
      if (outcome.isError) throw new Error(`${input.tool} failed`);
      return resultValue(outcome);
    },
    /** The floor: an activity that does nothing, to show what Temporal alone costs per call. */
    async plainNoop(input: PlainCallInput): Promise<unknown> {
      return input.args;
    },
  };
}

export type PlainActivities = ReturnType<typeof createPlainActivities>;
