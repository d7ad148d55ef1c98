/**
 * Validates what a script asked for before anything touches the network. Scripts choose the
 * method, headers and body; the fetcher owns the transport, so headers that describe the
 * connection or the framing (Host, Connection, Transfer-Encoding, Content-Length…) are dropped:
 * the Host header always comes from the checked URL, and framing from the body actually sent.
 */
import { HttpRefusal } from "./http-refusal.ts";

export interface HttpToolRequest {
  url: string;
  /** Default GET. */
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** One hop of a request, as the fetcher sends it; redirects derive the next hop from it. */
export interface HopRequest {
  url: URL;
  method: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string | undefined;
}

// CONNECT, TRACE and the like have no business in a script's API call.
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

const TRANSPORT_HEADERS = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "content-length",
  "expect",
  "http2-settings",
  // The fetcher decodes bodies itself and advertises exactly the codings it can undo.
  "accept-encoding",
]);

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Field values: visible characters, spaces and tabs; no CR, LF or NUL (no header injection).
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export interface PrepareOptions {
  userAgent: string;
  acceptEncoding: string;
}

export function prepareRequest(request: HttpToolRequest, options: PrepareOptions): HopRequest {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    throw new HttpRefusal("url", "", "not an absolute URL");
  }
  const host = url.hostname;
  const method = (request.method ?? "GET").toUpperCase();
  if (!METHODS.has(method)) throw new HttpRefusal("method", host, `method must be one of ${[...METHODS].join(", ")}`);
  if (request.body !== undefined && typeof request.body !== "string")
    throw new HttpRefusal("body", host, "the body must be a string");
  if (request.body !== undefined && (method === "GET" || method === "HEAD")) {
    throw new HttpRefusal("body", host, `${method} cannot have a body`);
  }

  const headers: Record<string, string> = { "user-agent": options.userAgent };
  const seen = new Set<string>();
  for (const [rawName, value] of Object.entries(request.headers ?? {})) {
    const name = rawName.toLowerCase();
    if (!TOKEN.test(name)) throw new HttpRefusal("header", host, "a header name is not a token");
    // The name is a validated token, so naming it cannot leak a value.
    if (typeof value !== "string" || !FIELD_VALUE.test(value))
      throw new HttpRefusal("header", host, `header ${name} has an invalid value`);
    if (seen.has(name)) throw new HttpRefusal("header", host, `header ${name} is given twice`);
    seen.add(name);
    if (!TRANSPORT_HEADERS.has(name)) headers[name] = value.trim();
  }
  headers["accept-encoding"] = options.acceptEncoding;
  return { url, method, headers, body: request.body };
}
