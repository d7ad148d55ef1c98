/**
 * What the parts of the MCP front door hand each other, in words of Rewind rather than of the
 * MCP SDK: a session's scope, the four tools and their answers, a run seen as an MCP task, and a
 * question put to the client's user. The one file that speaks the SDK (mcp-server-sdk.ts) turns
 * these into MCP messages; everything else uses only these.
 */
import type { ResolvedToolset } from "../../toolsets/index.ts";

/** Who a session serves, for its whole life: the caller's namespace and key, one toolset, an end user or none. */
export interface FrontDoorScope {
  namespace: string;
  /** The API key's principal: recorded as who decided a call the client's user approved. */
  principal: string;
  toolset: ResolvedToolset;
  /** Runs started here are this end user's (credentials, lists); only their runs are seen. */
  endUser?: string | undefined;
}

/** A tool as `tools/list` lists it. */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  inputSchema: Record<string, unknown>;
  /** Present on the tool a client may call as a task (`run_script`). */
  execution?: { taskSupport: "optional" };
}

/** A tool's answer: a short text for the model, and the same in structured form when there is one. */
export interface ToolAnswer {
  text: string;
  structured?: Record<string, unknown>;
  /** The call failed in a way the model can act on (a type error, a failed run, bad arguments). */
  isError?: boolean;
}

/** An MCP task's state; for Rewind a task is a run. */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

export interface TaskView {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** Runs are kept as Temporal keeps workflows, not for a fixed time: null. */
  ttl: null;
  pollInterval: number;
}

/** A question for the client's user (an MCP form elicitation). */
export interface Question {
  message: string;
  requestedSchema: { type: "object"; properties: Record<string, unknown>; required?: string[] };
}

export type Answer =
  { action: "accept"; content: Record<string, unknown> } | { action: "decline" } | { action: "cancel" };

/** Puts a question to the client's user and resolves with their answer; rejects when the client does not answer. */
export type Ask = (question: Question) => Promise<Answer>;

/** What a call has besides its arguments. */
export interface CallContext {
  /** Present when the client declared form elicitation: Rewind may ask its user to decide parked calls. */
  ask?: Ask | undefined;
  /** Aborts when the client cancels the request, goes away, or the session ends. */
  signal: AbortSignal;
  /** Present when the request carried a progress token: tells the client what the run is doing now. */
  progress?: ((message: string) => void) | undefined;
  /** The W3C trace context the request carried, for the run's trace. */
  traceparent?: string | undefined;
}

/** A refusal at the protocol level (a JSON-RPC error), where no tool answer can be given. */
export class ProtocolRefusal extends Error {
  override name = "ProtocolRefusal";
  readonly kind: "invalidParams" | "methodNotFound" | "internal";
  readonly data: unknown;

  constructor(kind: "invalidParams" | "methodNotFound" | "internal", message: string, data?: unknown) {
    super(message);
    this.kind = kind;
    this.data = data;
  }
}

/** What a session does with each request; the SDK file calls these and nothing else. */
export interface SessionHandlers {
  tools: ToolDefinition[];
  /** An ordinary `tools/call`. */
  callTool(name: string, args: unknown, context: CallContext): Promise<ToolAnswer>;
  /** A task-augmented `tools/call`: the task at once, and the text a host may show its model meanwhile. */
  startTask(name: string, args: unknown, context: CallContext): Promise<{ task: TaskView; note: string }>;
  tasks: TaskHandlers;
}

/** `tasks/*`, on the runs the session's scope sees; undefined answers "no such task". */
export interface TaskHandlers {
  get(taskId: string): Promise<TaskView | undefined>;
  /** Blocks until the run ends (asking the client's user where it can), then answers as `run_script` would. */
  result(taskId: string, context: CallContext): Promise<ToolAnswer | undefined>;
  list(cursor: string | undefined): Promise<{ tasks: TaskView[]; nextCursor?: string }>;
  /** Cancels the run and waits a little for it to end. */
  cancel(taskId: string): Promise<void>;
}
