/**
 * The `callMcpTool` activity: one attempt of an MCP tool call through the worker's connection
 * pool. The idempotency key (`<run_id>/<seq>`) is derived from the input, so every attempt of a
 * call carries the same one. A tool's own error is returned as a result (never retried); an
 * interruption is thrown as a typed failure the workflow's retry policy and mapping understand.
 */
import { Context } from "@temporalio/activity";
import { ApplicationFailure, CancelledFailure } from "@temporalio/common";
import { McpCallError, resultValue, type McpPool } from "../mcp/index.ts";
import { CALL_FAILURE, IDEMPOTENCY_META_KEY, idempotencyKey, type McpCallInput, type ToolCallResult } from "../shared/tool-call.ts";

export interface McpCallDeps {
  mcpPool: McpPool;
}

/** How often a pending call tells Temporal the worker is still alive. */
const HEARTBEAT_EVERY_MS = 3_000;

const FAILURE_OF_REASON: Record<string, { type: string; retryable: boolean }> = {
  unreachable: { type: CALL_FAILURE.unreachable, retryable: true },
  interrupted: { type: CALL_FAILURE.interrupted, retryable: true },
  timedOut: { type: CALL_FAILURE.timedOut, retryable: true },
  unauthorized: { type: CALL_FAILURE.unauthorized, retryable: false },
  forbidden: { type: CALL_FAILURE.forbidden, retryable: false },
};

function textOf(content: unknown[]): string {
  const texts = content.flatMap((item) => (typeof item === "object" && item !== null && (item as { type?: unknown }).type === "text" ? [String((item as { text?: unknown }).text)] : []));
  return texts.join("\n").slice(0, 2000) || "the tool reported an error";
}

export function createCallMcpTool(deps: McpCallDeps) {
  return async function callMcpTool(input: McpCallInput): Promise<ToolCallResult> {
    const context = Context.current();
    const attempt = context.info.attempt;
    const heartbeat = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
    try {
      const outcome = await deps.mcpPool.callTool({
        url: input.url,
        poolKey: input.url,
        name: input.tool,
        arguments: input.args ?? {},
        meta: { [IDEMPOTENCY_META_KEY]: idempotencyKey(input.runId, input.seq) },
        timeoutMs: input.timeoutMs,
        signal: context.cancellationSignal,
      });
      if (outcome.isError) {
        return { ok: false, error: { code: "toolFailed", message: `${input.server}.${input.tool}: ${textOf(outcome.content)}`, details: { content: outcome.content } }, attempt };
      }
      return { ok: true, value: resultValue(outcome), attempt };
    } catch (error) {
      if (!(error instanceof McpCallError)) throw error;
      if (error.reason === "cancelled") throw new CancelledFailure(error.message);
      if (error.reason === "toolError") {
        return { ok: false, error: { code: "toolFailed", message: `${input.server}.${input.tool}: ${error.message}`, details: { reason: "toolError" } }, attempt };
      }
      // A call that provably never left (e.g. a connect timeout) is "unreachable" whatever the
      // reason says: at-most-once tools may then be told it was not sent.
      const reason = (error.reason === "timedOut" || error.reason === "interrupted") && !error.outcomeUnknown ? "unreachable" : error.reason;
      const failure = FAILURE_OF_REASON[reason] ?? { type: CALL_FAILURE.interrupted, retryable: true };
      throw ApplicationFailure.create({ type: failure.type, message: error.message, nonRetryable: !failure.retryable, details: [{ attempt }] });
    } finally {
      clearInterval(heartbeat);
    }
  };
}
