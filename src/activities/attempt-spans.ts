/**
 * Names and attributes of attempt spans, by OpenTelemetry's semantic conventions: an MCP
 * attempt is an MCP client span (`tools/call {tool}`, `mcp.*`, `gen_ai.*`), an http attempt an
 * HTTP client span (`{method}`, `http.*`, `url.full` with its secrets redacted). Names stay
 * low-cardinality; the run and the call are attributes (`rewind.run.id`, `rewind.call.seq`).
 * Arguments, results and credentials are never recorded.
 */
import type { Attributes } from "@opentelemetry/api";
import { ApplicationFailure, CancelledFailure } from "@temporalio/common";
import { McpCallError, McpConnectError, type McpExchange } from "../mcp/index.ts";

/** `server.address` and `server.port` of a URL (the port the scheme implies when it names none). */
export function serverOf(url: string): Attributes {
  if (!URL.canParse(url)) return {};
  const parsed = new URL(url);
  const port =
    parsed.port !== ""
      ? Number(parsed.port)
      : parsed.protocol === "https:"
        ? 443
        : parsed.protocol === "http:"
          ? 80
          : undefined;
  return {
    "server.address": parsed.hostname.replace(/^\[|\]$/g, ""),
    ...(port === undefined ? {} : { "server.port": port }),
  };
}

/**
 * `url.full` as the conventions ask: credentials in the user info become `REDACTED`, and so does
 * every query value (an API key or a signature can hide in any of them); the fragment is dropped.
 */
export function redactedUrl(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  if (parsed.username !== "") parsed.username = "REDACTED";
  if (parsed.password !== "") parsed.password = "REDACTED";
  parsed.hash = "";
  const query = [...parsed.searchParams.keys()].map((name) => `${encodeURIComponent(name)}=REDACTED`).join("&");
  parsed.search = query;
  return parsed.toString();
}

export interface McpAttemptOf {
  runId: string;
  seq: number;
  server: string;
  tool: string;
  url: string;
  attempt: number;
}

/** The span of an attempt at `tools/call`: its name and what is known before it is sent. */
export function mcpAttemptSpan(call: McpAttemptOf): { name: string; attributes: Attributes } {
  return {
    name: `tools/call ${call.tool}`,
    attributes: {
      "mcp.method.name": "tools/call",
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": call.tool,
      "network.transport": "tcp",
      "network.protocol.name": "http",
      ...serverOf(call.url),
      "rewind.run.id": call.runId,
      "rewind.call.seq": call.seq,
      "rewind.call.attempt": call.attempt,
      "rewind.tool": `${call.server}.${call.tool}`,
    },
  };
}

/** What the request's exchange adds to its span once it is sent. */
export function exchangeAttributes(exchange: McpExchange): Attributes {
  return {
    "jsonrpc.request.id": exchange.requestId,
    ...(exchange.sessionId === undefined ? {} : { "mcp.session.id": exchange.sessionId }),
    ...(exchange.protocolVersion === undefined ? {} : { "mcp.protocol.version": exchange.protocolVersion }),
  };
}

/**
 * `error.type` of an attempt that threw: the failure's type (`Unreachable`, `Unauthorized`,
 * `SchemaChanged`…), `cancelled`, or the error's class for anything unforeseen. The activity
 * names a more precise type where it turns an MCP error into a failure.
 */
export function thrownErrorType(error: unknown): string {
  if (error instanceof ApplicationFailure) return error.type ?? "ApplicationFailure";
  if (error instanceof CancelledFailure) return "cancelled";
  if ((error instanceof McpCallError || error instanceof McpConnectError) && error.reason === "cancelled")
    return "cancelled";
  return error instanceof Error ? error.name : "unknown";
}

export interface HttpAttemptOf {
  runId: string;
  seq: number;
  method: string;
  url: string;
  attempt: number;
}

/** Methods the HTTP conventions know; any other is `_OTHER`, so names stay low-cardinality. */
const HTTP_METHODS = new Set(["CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "QUERY", "TRACE"]);

/** The HTTP client span of one request of the http tool. */
export function httpAttemptSpan(request: HttpAttemptOf): { name: string; attributes: Attributes } {
  const known = HTTP_METHODS.has(request.method);
  const url = redactedUrl(request.url);
  return {
    name: known ? request.method : "HTTP",
    attributes: {
      "http.request.method": known ? request.method : "_OTHER",
      ...(known ? {} : { "http.request.method_original": request.method }),
      ...(url === undefined ? {} : { "url.full": url }),
      ...serverOf(request.url),
      "rewind.run.id": request.runId,
      "rewind.call.seq": request.seq,
      "rewind.call.attempt": request.attempt,
      "rewind.tool": "http.fetch",
    },
  };
}
