/**
 * The contract between the workflow and the activities that carry tool calls: inputs, results
 * and limits (the failure types an attempt can end with are in call-failures.ts). A tool's own
 * error (MCP `isError`) is a result, not a failure, so Temporal never retries it; failures are
 * interruptions.
 */

import type { CredentialRef, CredentialScope } from "./credentials.ts";
import type { SpeculativeStep } from "./step.ts";
import type { JsonSchema } from "./toolset.ts";

/** Input of `callMcpTool`. The idempotency key is derived from runId and seq, never passed. */
export interface McpCallInput {
  runId: string;
  seq: number;
  /** Group (MCP server name in the toolset) and the tool's own name. */
  server: string;
  tool: string;
  url: string;
  args: unknown;
  /** Per-attempt budget the MCP request itself gets, in ms. */
  timeoutMs: number;
  /** Whose credentials to resolve, inside the activity only. */
  credentials: CredentialRef;
  /** Set after the harness approved sending a call whose schema changed. */
  skipSchemaCheck?: boolean;
  /** W3C trace context of the call's span. */
  traceparent?: string;
  /**
   * The sandbox runtime the run started on, which decides how a result becomes a value
   * (`resultValue`). Sent from runtime 3 on; absent, the run is older (1 or 2).
   */
  runtimeVersion?: number;
  /**
   * The tool's pinned output schema, which its `structuredContent` must fit (runtime 4 on; see
   * SANDBOX_RUNTIME_VERSION). Absent: the tool declares none, or the run is older.
   */
  outputSchema?: JsonSchema;
  /**
   * Waits (sleep, signal, parked call, child) the run had finished when it made this call: a
   * server's tool listing made before the last of them is listed again for the schema check.
   * Absent means none.
   */
  waits?: number;
}

/**
 * `step`: the speculative step the worker took with the result, if it took one (wire name kept:
 * stored in histories). `credentials`: the scope whose credentials an MCP call was sent with, if
 * any was.
 */
export type ToolCallResult =
  | {
      ok: true;
      value: unknown;
      attempt: number;
      step?: SpeculativeStep;
      credentials?: CredentialScope;
    }
  | {
      ok: false;
      error: { code: "toolFailed" | "invalidResult"; message: string; details?: unknown };
      attempt: number;
      credentials?: CredentialScope;
    };

/** The key every attempt of a call carries, in MCP `_meta` and in host tools' context. */
export function idempotencyKey(runId: string, seq: number): string {
  return `${runId}/${seq}`;
}

export const IDEMPOTENCY_META_KEY = "codes.rewind/idempotency-key";

/** Attempts of a call under `onInterruption: "retry"`. */
export const RETRY_ATTEMPTS = 5;
/** Run-wide limit of tool calls in flight. */
export const RUN_CONCURRENCY = 16;
/** Default per-attempt timeout of MCP tools. */
export const DEFAULT_MCP_TIMEOUT_MS = 5 * 60_000;
/**
 * Largest tool result, as JSON. Results over the payload threshold are kept in the payload
 * store (history holds a reference), so Temporal's 2 MiB payload limit does not bind; this one
 * keeps a result within what a script's isolate holds comfortably (the sandbox's default 128 MB
 * heap holds a 16 MiB result several times over as strings and objects; raise
 * REWIND_SANDBOX_MEMORY_MB with it). Past it the call fails once with resultTooLarge.
 */
export const MAX_RESULT_BYTES = 16 * 1024 * 1024;
