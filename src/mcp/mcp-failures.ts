/**
 * Turns a failed request into McpConnectError / McpCallError. It decides from facts recorded on
 * the wire (http-observer.ts, request-watch.ts) before it looks at what the SDK threw, because the
 * SDK reports a timeout, a cancellation and a server's JSON-RPC error with the same McpError
 * class, and quotes response bodies in its messages.
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { targetRefusalIn } from "../http-tool/index.ts";
import type { ConnectionObservations, HttpRefusal } from "./http-observer.ts";
import { McpCallError, McpConnectError, saysInsufficientScope, scopeAskedIn } from "./mcp-errors.ts";
import type { Scrubber } from "./secret-scrubber.ts";
import { WatchedFailure } from "./request-watch.ts";

export interface FailureContext {
  /** The server, as origin + path. */
  where: string;
  /** Takes the credentials the request carried out of every text of the server's it quotes. */
  scrubber: Scrubber;
  observations: ConnectionObservations;
  boundMs: number;
  hasSession(): boolean;
  isOpen(): boolean;
}

function messageOf(error: unknown): string {
  let deepest: unknown = error;
  for (let depth = 0; depth < 5 && deepest instanceof Error && deepest.cause instanceof Error; depth++)
    deepest = deepest.cause;
  return deepest instanceof Error ? deepest.message : String(deepest);
}

/** The JSON-RPC error inside a refused HTTP response's body, when there is one. */
function jsonRpcError(refusal: HttpRefusal): { code: number; message: string } | undefined {
  try {
    const body: unknown = JSON.parse(refusal.body);
    if (typeof body !== "object" || body === null || !("error" in body)) return undefined;
    const { error } = body;
    if (typeof error !== "object" || error === null || !("code" in error) || typeof error.code !== "number")
      return undefined;
    return { code: error.code, message: "message" in error && typeof error.message === "string" ? error.message : "" };
  } catch {
    return undefined;
  }
}

/**
 * Whether a refusal says the server does not know our session: 404 is what the spec asks for,
 * but the reference server and the SDKs' own examples answer 400 "No valid session ID
 * provided" after a restart. Either way the request was rejected before anything ran.
 */
export function forgetsSession(refusal: HttpRefusal, hasSession: boolean): boolean {
  if (!hasSession) return false;
  if (refusal.status === 404) return true;
  if (refusal.status !== 400) return false;
  const text = jsonRpcError(refusal)?.message ?? refusal.body;
  return (
    /session/i.test(text) &&
    /(no valid|not found|unknown|invalid|expired|missing|no such|not exist|terminated)/i.test(text)
  );
}

function isSchemaError(error: unknown): boolean {
  return error instanceof SyntaxError || (error instanceof Error && "issues" in error && Array.isArray(error.issues));
}

/** One line about a parse failure (a schema error's message is its whole issue list). */
function schemaProblem(error: unknown): string {
  const issues: unknown = error instanceof Error && "issues" in error ? error.issues : undefined;
  const [first] = Array.isArray(issues) ? (issues as unknown[]) : [];
  if (typeof first === "object" && first !== null && "message" in first && typeof first.message === "string") {
    const path = "path" in first && Array.isArray(first.path) ? first.path.join(".") : "";
    return path === "" ? first.message : `${path}: ${first.message}`;
  }
  return messageOf(error).slice(0, 200);
}

/** The server's own text: McpError prefixes "MCP error <code>: " on each side of the wire. */
const serverText = (message: string) => message.replace(/^(MCP error -?\d+: )+/, "");

/** Failure to connect (`phase: "connect"`) or to list tools on an open connection. */
export function connectError(failure: unknown, context: FailureContext, phase: "connect" | "list"): McpConnectError {
  if (failure instanceof McpConnectError) return failure;
  const { where } = context;
  const url = { url: where };
  const clean = context.scrubber.text;
  const watched = failure instanceof WatchedFailure ? failure : undefined;
  const error = watched ? watched.error : failure;
  if (watched?.cancelled)
    return new McpConnectError(
      "cancelled",
      `${phase === "connect" ? "connecting to" : "listing the tools of"} ${where} was cancelled`,
      url,
    );
  if (watched?.expired)
    return new McpConnectError("timedOut", `${where} did not answer within ${context.boundMs} ms`, url);
  const fetchError = watched?.watch.fetchError ?? (phase === "connect" ? context.observations.fetchError : undefined);
  // Refused by the outbound target policy before any socket: only that is said, nothing of the wire.
  const refused = targetRefusalIn(fetchError) ?? targetRefusalIn(error);
  if (refused) return new McpConnectError("targetNotAllowed", refused.message, url);
  if (watched?.broken)
    return new McpConnectError(
      "unreachable",
      `the connection to ${where} broke: ${clean(watched.broken.message)}`,
      url,
    );
  if (fetchError !== undefined)
    return new McpConnectError("unreachable", `could not reach ${where}: ${clean(messageOf(fetchError))}`, url);
  const refusal = watched?.watch.refusal ?? (phase === "connect" ? context.observations.refusal : undefined);
  if (refusal) return refusedConnect(refusal, context, phase);
  if (error instanceof McpError)
    return new McpConnectError(
      "protocol",
      `${where} answered with JSON-RPC error ${error.code}: ${clean(serverText(error.message))}`,
      url,
    );
  if (phase === "connect" && isSchemaError(error))
    return new McpConnectError(
      "notMcp",
      `${where} answered, but not with JSON-RPC (${clean(schemaProblem(error))})`,
      url,
    );
  if (phase === "connect" && error instanceof Error && /content type/i.test(error.message)) {
    return new McpConnectError(
      "notMcp",
      `${where} answered, but not as an MCP server: ${clean(messageOf(error)).slice(0, 200)}`,
      url,
    );
  }
  if (isSchemaError(error))
    return new McpConnectError(
      "protocol",
      `${where} sent a malformed tools/list answer (${clean(schemaProblem(error))})`,
      url,
    );
  return new McpConnectError("protocol", `${where} failed: ${clean(messageOf(error)).slice(0, 300)}`, url);
}

function refusedConnect(refusal: HttpRefusal, context: FailureContext, phase: "connect" | "list"): McpConnectError {
  const { where } = context;
  const { status } = refusal;
  if (status === 401)
    return new McpConnectError("unauthorized", `${where} refused the credentials (HTTP 401)`, { url: where, status });
  if (status === 403) {
    const insufficientScope = saysInsufficientScope(refusal.wwwAuthenticate);
    return new McpConnectError(
      "forbidden",
      `${where} forbade the request (HTTP 403${insufficientScope ? ", insufficient scope" : ""})`,
      { url: where, status, insufficientScope, ...scopeOf(refusal.wwwAuthenticate, context.scrubber.text) },
    );
  }
  if (phase === "list" && forgetsSession(refusal, context.hasSession())) {
    return new McpConnectError("notMcp", `${where} no longer knows the session (HTTP ${status})`, {
      url: where,
      status,
      sessionExpired: true,
    });
  }
  if (status >= 500)
    return new McpConnectError("protocol", `${where} failed with HTTP ${status}`, { url: where, status });
  return new McpConnectError("notMcp", `${where} answered HTTP ${status}: not an MCP endpoint`, { url: where, status });
}

/** Failure of a tools/call request on an open connection. */
export function callError(failure: unknown, context: FailureContext): McpCallError {
  const { where } = context;
  const clean = context.scrubber.text;
  if (!(failure instanceof WatchedFailure)) {
    // Only argument checks fail before anything is sent.
    return new McpCallError("toolError", clean(messageOf(failure)), {
      url: where,
      outcomeUnknown: false,
      code: ErrorCode.InvalidParams,
    });
  }
  const { watch, error } = failure;
  if (failure.cancelled)
    return new McpCallError(
      "cancelled",
      `the call to ${where} was cancelled${watch.sent ? " after it was sent" : ""}`,
      { url: where, outcomeUnknown: watch.sent },
    );
  if (failure.expired)
    return new McpCallError("timedOut", `${where} did not answer the call within ${context.boundMs} ms`, {
      url: where,
      outcomeUnknown: watch.sent,
    });
  const refused = targetRefusalIn(watch.fetchError) ?? targetRefusalIn(error);
  if (refused) return new McpCallError("targetNotAllowed", refused.message, { url: where, outcomeUnknown: false });
  if (failure.broken)
    return new McpCallError("interrupted", `the call was sent to ${where}, then ${clean(failure.broken.message)}`, {
      url: where,
      outcomeUnknown: true,
    });
  if (watch.fetchError !== undefined) {
    const detail = clean(messageOf(watch.fetchError));
    if (!watch.sent)
      return new McpCallError("unreachable", `could not reach ${where}: ${detail}`, {
        url: where,
        outcomeUnknown: false,
      });
    return new McpCallError("interrupted", `the connection to ${where} failed after the call was sent: ${detail}`, {
      url: where,
      outcomeUnknown: true,
    });
  }
  if (watch.refusal) return refusedCall(watch.refusal, context);
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed && !context.isOpen()) {
    return new McpCallError("interrupted", `the connection to ${where} closed before the answer`, {
      url: where,
      outcomeUnknown: true,
    });
  }
  if (error instanceof McpError) {
    return new McpCallError(
      "toolError",
      `${where} answered with JSON-RPC error ${error.code}: ${clean(serverText(error.message))}`,
      { url: where, outcomeUnknown: false, code: error.code },
    );
  }
  if (isSchemaError(error)) {
    return new McpCallError(
      "toolError",
      `${where} answered with something that is not a tool result (${clean(schemaProblem(error))})`,
      { url: where, outcomeUnknown: false, code: ErrorCode.InternalError },
    );
  }
  return new McpCallError(
    "interrupted",
    `the call to ${where} failed after it was sent: ${clean(messageOf(error)).slice(0, 300)}`,
    { url: where, outcomeUnknown: true },
  );
}

function refusedCall(refusal: HttpRefusal, context: FailureContext): McpCallError {
  const { where } = context;
  const { status } = refusal;
  if (status === 401)
    return new McpCallError("unauthorized", `${where} refused the credentials (HTTP 401)`, {
      url: where,
      status,
      outcomeUnknown: false,
    });
  if (status === 403) {
    const insufficientScope = saysInsufficientScope(refusal.wwwAuthenticate);
    return new McpCallError(
      "forbidden",
      `${where} forbade the call (HTTP 403${insufficientScope ? ", insufficient scope" : ""})`,
      {
        url: where,
        status,
        insufficientScope,
        outcomeUnknown: false,
        ...scopeOf(refusal.wwwAuthenticate, context.scrubber.text),
      },
    );
  }
  if (forgetsSession(refusal, context.hasSession())) {
    return new McpCallError("unreachable", `${where} answered HTTP ${status}: it no longer knows the session`, {
      url: where,
      status,
      sessionExpired: true,
      outcomeUnknown: false,
    });
  }
  if (status === 404)
    return new McpCallError("unreachable", `${where} answered HTTP 404`, { url: where, status, outcomeUnknown: false });
  if (status >= 500)
    return new McpCallError("interrupted", `${where} failed with HTTP ${status} after the call was sent`, {
      url: where,
      status,
      outcomeUnknown: true,
    });
  const rpc = jsonRpcError(refusal);
  const detail = rpc
    ? `JSON-RPC error ${rpc.code}: ${context.scrubber.text(serverText(rpc.message))}`
    : `HTTP ${status}`;
  return new McpCallError("toolError", `${where} refused the call (${detail})`, {
    url: where,
    status,
    outcomeUnknown: false,
    code: rpc?.code ?? status,
  });
}

/** The scope a challenge asks for, scrubbed: a server may quote the refused token in it. */
function scopeOf(wwwAuthenticate: string | undefined, clean: (text: string) => string): { scopeAsked?: string } {
  const scope = scopeAskedIn(wwwAuthenticate);
  return scope === undefined ? {} : { scopeAsked: clean(scope) };
}
