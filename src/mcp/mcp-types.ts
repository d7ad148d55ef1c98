/**
 * The small contract the rest of Rewind uses to reach MCP servers, kept apart from the file that
 * implements it with the official SDK, so that registration, the dispatcher activity and their
 * tests depend on these shapes and never on the SDK's.
 */

/** A tool as an MCP server lists it; schemas and annotations exactly as the server sent them. */
export interface McpToolDescriptor {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/**
 * The server's answer to a tool call. `isError: true` is the tool's own failure, reported as a
 * result (the server ran the call); every other failure is a thrown `McpCallError`.
 */
export interface McpCallOutcome {
  kind: "result";
  isError: boolean;
  /** Content blocks as sent (text, image, audio, resource links…). */
  content: unknown[];
  /** Present when the server sent it. Not validated here against the tool's output schema. */
  structuredContent?: unknown;
}

export interface McpCallRequest {
  url: string;
  /** Sent on every HTTP request of the connection (credentials). Only used to open it. */
  headers?: Record<string, string>;
  /**
   * Identifies the connection to reuse: the server and a fingerprint of the credentials, given by
   * the caller. Calls with the same key share a connection, so the key must change with headers.
   */
  poolKey: string;
  name: string;
  /** A JSON object, or undefined for none. */
  arguments: unknown;
  /** Goes into `params._meta`, e.g. `{ "codes.rewind/idempotency-key": "run_x/3", traceparent }`. */
  meta: Record<string, unknown>;
  /** Bound of this call, including waiting for a connection. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface McpPoolOptions {
  /** A connection unused this long is closed. Default 60 000 ms. */
  maxIdleMs?: number;
  /** Connections kept open; beyond it the least recently used idle ones are closed. Default 64. */
  maxConnections?: number;
  /** Bound of opening one connection (shared by the calls waiting for it). Default 10 000 ms. */
  connectTimeoutMs?: number;
}

export interface McpPool {
  /** Calls a tool; resolves with the server's result or throws `McpCallError`. */
  callTool(request: McpCallRequest): Promise<McpCallOutcome>;
  /** Lists every tool (all pages) on the pooled connection; throws `McpConnectError`. */
  listTools(url: string, headers: Record<string, string> | undefined, poolKey: string): Promise<McpToolDescriptor[]>;
  /** Closes every connection; calls in flight end as `interrupted`. */
  close(): Promise<void>;
}
