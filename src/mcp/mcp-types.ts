/**
 * The small contract the rest of Rewind uses to reach MCP servers, kept apart from the file that
 * implements it with the official SDK, so that registration, the dispatcher activity and their
 * tests depend on these shapes and never on the SDK's.
 */
import type { TargetPolicy } from "../http-tool/index.ts";

/** A tool as an MCP server lists it; schemas and annotations exactly as the server sent them. */
export interface McpToolDescriptor {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** `execution.taskSupport` as listed: whether the tool is called as an MCP task. */
  taskSupport?: "forbidden" | "optional" | "required";
}

/** A call's progress, as a server's `notifications/progress` reports it. */
export interface McpProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** A form the server asks the user to fill in (`elicitation/create`, form mode). */
export interface McpElicitation {
  message: string;
  requestedSchema: Record<string, unknown>;
}

export type McpElicitationAnswer =
  { action: "accept"; content: Record<string, unknown> } | { action: "decline" } | { action: "cancel" };

/** The exchange a `tools/call` request went out on, as its span names it. */
export interface McpExchange {
  /** The JSON-RPC id of the request on its session. */
  requestId: string;
  sessionId: string | undefined;
  /** The protocol version the session negotiated. */
  protocolVersion: string | undefined;
}

/** What a call wants to hear of the server while it runs. */
export interface McpCallHooks {
  /** Told when the `tools/call` request is sent (again for a call sent once more on a new session). */
  onSent?(exchange: McpExchange): void;
  onProgress?(progress: McpProgress): void;
  /** Answers the server's question; rejecting answers the server with a JSON-RPC error. */
  onElicitation?(request: McpElicitation, signal: AbortSignal): Promise<McpElicitationAnswer>;
}

/** A task on a server's session: what an attempt that comes later needs to find it again. */
export interface McpTaskHandle {
  taskId: string;
  sessionId: string;
}

export interface McpTaskOptions {
  /** A task an earlier attempt started: wait for it instead of calling the tool again. */
  resume?: McpTaskHandle;
  /** Told as soon as the server created the task. */
  onCreated(task: McpTaskHandle): void;
  /** Asked of the server as the task's time to live. */
  ttlMs?: number;
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
  /** Times the call was sent again on a new session because the server had forgotten the old one. */
  resent?: number;
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
  /**
   * Names the sessions that are interchangeable until first used (the namespace, the server and
   * the credentials): with no session of its own yet, the call takes the pool's spare for this
   * key, if the pool keeps spares. Never the same as another tenant's.
   */
  spareKey?: string;
  name: string;
  /** A JSON object, or undefined for none. */
  arguments: unknown;
  /** Goes into `params._meta`, e.g. `{ "codes.rewind/idempotency-key": "run_x/3", traceparent }`. */
  meta: Record<string, unknown>;
  /** Bound of this call, including waiting for a connection. */
  timeoutMs: number;
  signal?: AbortSignal;
  hooks?: McpCallHooks;
  /** Call the tool as an MCP task and wait for the task's result. */
  task?: McpTaskOptions;
}

/** A run's view of a server's tool list, for the schema check. */
export interface McpListing {
  tools: McpToolDescriptor[];
  /** Epoch ms when it was listed. */
  listedAt: number;
  /** True until the server said its tools changed (only servers that offer `tools.listChanged`). */
  fresh(): boolean;
  /** The server notifies changes, so a listing stays good until it says so. */
  notifiesChanges: boolean;
}

export interface McpPoolOptions {
  /** A connection unused this long is closed. Default 60 000 ms. */
  maxIdleMs?: number;
  /** Connections kept open; beyond it the least recently used idle ones are closed. Default 256 (a session per run and server). */
  maxConnections?: number;
  /** Bound of opening one connection (shared by the calls waiting for it). Default 10 000 ms. */
  connectTimeoutMs?: number;
  /** The outbound target policy every connection goes through. Default: none, plain fetches. */
  targets?: TargetPolicy;
  /**
   * Keep one unused session ready for each `spareKey` lately asked for, closed when no request
   * took it within this long. Default 0: no spares, every new pool key opens its own session.
   */
  spareIdleMs?: number;
}

export interface McpPool {
  /** Calls a tool; resolves with the server's result or throws `McpCallError`. */
  callTool(request: McpCallRequest): Promise<McpCallOutcome>;
  /** Lists every tool (all pages) on the pooled connection; throws `McpConnectError`. */
  listTools(
    url: string,
    headers: Record<string, string> | undefined,
    poolKey: string,
    spareKey?: string,
  ): Promise<McpListing>;
  /**
   * Starts opening the pooled session `poolKey` if there is none, without waiting: a call that
   * comes soon finds it open or opening. A session that fails to open is dropped; the call
   * that comes then opens its own and reports why.
   */
  open(url: string, headers: Record<string, string> | undefined, poolKey: string, spareKey?: string): void;
  /** Spare sessions kept now (opened or opening), over every spare key. */
  readonly spareSessions: number;
  /**
   * Retires every pooled session whose key starts with `prefix` (a run's, when the run will make
   * no call here): each closes once its calls in flight are done.
   */
  retireWhereKeyStarts(prefix: string): void;
  /** Closes every connection; calls in flight end as `interrupted`. */
  close(): Promise<void>;
}
