/**
 * The two errors of the MCP layer, and the facts the layers above decide with: whether a call may
 * have run (at-most-once tools depend on it), the HTTP status of a refusal, the server at fault.
 * Error text ends up in Temporal history in clear, so messages name a server by origin and path
 * only (no userinfo, no query) and have header values scrubbed out; no raw `cause` is attached.
 */

/** Why listing tools (or opening a connection) failed. */
export type McpConnectReason =
  "unreachable" | "notMcp" | "timedOut" | "unauthorized" | "forbidden" | "protocol" | "cancelled" | "targetNotAllowed";

/** Why a tool call did not produce a result. See {@link McpCallError} for how each is detected. */
export type McpCallReason =
  | "unreachable"
  | "interrupted"
  | "timedOut"
  | "unauthorized"
  | "forbidden"
  | "toolError"
  | "cancelled"
  | "targetNotAllowed";

export interface McpErrorDetails {
  /** The server, as `origin + path`. */
  url: string;
  /** The HTTP status of a refusal (401, 403, 404, 500…), when there was one. */
  status?: number;
  /** A 403 whose `WWW-Authenticate` said `error="insufficient_scope"`: not an expiry. */
  insufficientScope?: boolean;
  /** The scope a 403 `insufficient_scope` asked for (`WWW-Authenticate: Bearer scope="…"`). */
  scopeAsked?: string;
  /** @internal The server forgot our session (HTTP 404): nothing ran, a new session may retry. */
  sessionExpired?: boolean;
}

/** What both errors of the MCP layer tell about the server and its refusal. */
abstract class McpError extends Error {
  readonly url: string;
  readonly status: number | undefined;
  readonly insufficientScope: boolean;
  readonly scopeAsked: string | undefined;
  readonly sessionExpired: boolean;

  protected constructor(message: string, details: McpErrorDetails) {
    super(message);
    this.url = details.url;
    this.status = details.status;
    this.insufficientScope = details.insufficientScope ?? false;
    this.scopeAsked = details.scopeAsked;
    this.sessionExpired = details.sessionExpired ?? false;
  }
}

/**
 * Connecting to an MCP server or listing its tools failed.
 *
 * - `unreachable`: no HTTP answer at all (connection refused, DNS failure, reset, invalid URL).
 * - `notMcp`: an HTTP answer, but not from an MCP endpoint (404, HTML, JSON that is not JSON-RPC).
 * - `timedOut`: no complete answer within the bound.
 * - `unauthorized` (401) / `forbidden` (403, see `insufficientScope`).
 * - `protocol`: an MCP server that failed otherwise (JSON-RPC error, 5xx, unsupported version).
 * - `cancelled`: the caller's signal aborted.
 * - `targetNotAllowed`: the outbound target policy refused the server's address (or a redirect's)
 *   before any socket was opened; the message says only that.
 */
export class McpConnectError extends McpError {
  override name = "McpConnectError";
  readonly reason: McpConnectReason;

  constructor(reason: McpConnectReason, message: string, details: McpErrorDetails) {
    super(message, details);
    this.reason = reason;
  }
}

export interface McpCallErrorDetails extends McpErrorDetails {
  /** True when the server may have run the call: the request left this process and no answer came. */
  outcomeUnknown: boolean;
  /** `toolError`: the JSON-RPC error code (or the HTTP status of a 4xx refusal). */
  code?: number;
}

/**
 * A tool call ended without a result. How each reason is detected (the transport's fetch is
 * observed per request, so these are facts, not guesses from message text):
 *
 * - `unreachable` (`outcomeUnknown: false`): the `tools/call` request never reached the server.
 *   Either the MCP session could not be established (the error of connecting, or its bound), or
 *   the POST failed while connecting (ECONNREFUSED, DNS, unreachable host, connect timeout, TLS
 *   handshake), or the server answered 404 for the request (it forgot the session or the
 *   endpoint: the pool retries once on a new session first). Safe to send again.
 * - `interrupted` (`outcomeUnknown: true`): the POST had left the connect phase and then the
 *   socket was reset or closed before an answer (this includes, conservatively, a keep-alive
 *   socket the server closed at the very moment it was reused); or the call's SSE response
 *   stream ended or broke without carrying the answer and without an event id to resume from
 *   (or resuming failed); or the connection was closed under the call (pool closed); or the
 *   server answered 5xx or something that is not MCP. The server may have run the call.
 * - `timedOut` (`outcomeUnknown: true` once sent): `timeoutMs` passed without an answer.
 * - `unauthorized` / `forbidden`: HTTP 401 / 403 to the POST (or to connecting). Nothing ran.
 * - `toolError` (`outcomeUnknown: false`): the server answered with a JSON-RPC error (unknown
 *   tool, invalid params; `code` and message kept), refused the HTTP request with another 4xx,
 *   or sent a result that is not a CallToolResult. A tool's own failure is not an error here:
 *   it is a result with `isError: true`.
 * - `cancelled`: the caller's signal aborted; `outcomeUnknown` says whether it was already sent.
 * - `targetNotAllowed` (`outcomeUnknown: false`): the outbound target policy refused the server's
 *   address (a DNS answer that turned private, a server no longer trusted) or a redirect's.
 */
export class McpCallError extends McpError {
  override name = "McpCallError";
  readonly reason: McpCallReason;
  readonly outcomeUnknown: boolean;
  readonly code: number | undefined;

  constructor(reason: McpCallReason, message: string, details: McpCallErrorDetails) {
    super(message, details);
    this.reason = reason;
    this.outcomeUnknown = details.outcomeUnknown;
    this.code = details.code;
  }
}

/** `origin + path` of a URL, for messages: userinfo and query strings may carry secrets. */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return "(an invalid URL)";
  }
}

/** The `scope` a Bearer challenge names (RFC 6750 §3), if any. */
export function scopeAskedIn(wwwAuthenticate: string | undefined): string | undefined {
  const match = wwwAuthenticate === undefined ? null : /scope\s*=\s*"([^"]*)"/i.exec(wwwAuthenticate);
  return match?.[1];
}

/** Whether `WWW-Authenticate` carries `error="insufficient_scope"` (RFC 6750 §3.1). */
export function saysInsufficientScope(wwwAuthenticate: string | undefined): boolean {
  return wwwAuthenticate !== undefined && /error\s*=\s*"?insufficient_scope"?/i.test(wwwAuthenticate);
}
