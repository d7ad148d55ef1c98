/**
 * The fetch the MCP client transport uses. It is where Rewind learns what the SDK does not tell:
 * whether a request left this process before a failure, the status and `WWW-Authenticate` of an
 * HTTP refusal, and whether the response stream of one request ended without its answer (see
 * event-stream-watch.ts). Each request is attributed to its caller through an AsyncLocalStorage
 * scope, because many calls share one pooled connection and the SDK does not say which stream
 * belongs to which call. It also puts a call's W3C trace context, sent in `_meta`, in the
 * `traceparent` header of the call's POST.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { watchEventStream, type StreamWatch } from "./event-stream-watch.ts";
import { linkSignals } from "./linked-signal.ts";

export type FetchFn = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface HttpRefusal {
  status: number;
  wwwAuthenticate: string | undefined;
  /** The start of the body, for JSON-RPC error details. */
  body: string;
}

/** What happened to one JSON-RPC request on the wire. */
export interface RequestWatch extends StreamWatch {
  /** The POST was handed to fetch and did not fail while connecting. */
  sent: boolean;
  fetchError?: unknown;
  refusal?: HttpRefusal;
  /** Set once the caller has its answer; later stream endings mean nothing. */
  settled: boolean;
  /** Aborts this request's own HTTP exchange (timeout, cancellation). */
  signal: AbortSignal;
  /** Run once the caller has its answer: lets go of what its exchanges held on to. */
  afterSettled: (() => void)[];
}

export const requestScope = new AsyncLocalStorage<RequestWatch>();

/**
 * Runs a function in the async context this module was loaded in, which holds no call. A socket
 * keeps the async context it was opened in for as long as it lives, and a session reuses its
 * sockets for every later call: opened in a call's context, one would keep that call (its
 * hooks, its watch, its activity) alive as long as the session.
 */
const outsideAnyCall = AsyncLocalStorage.snapshot();

/** Bound of a POST no request waits for (notifications). */
const UNWATCHED_POST_MS = 10_000;

/** Failures of the connect phase: the request's bytes never reached the server. */
const CONNECT_PHASE_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_FAIL",
  "EAI_NONAME",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "ENETDOWN",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  "ERR_INVALID_URL",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  // The outbound target policy refused the address: nothing was dialled.
  "ERR_TARGET_NOT_ALLOWED",
]);

function errorCodes(error: unknown, depth = 0): string[] {
  if (typeof error !== "object" || error === null || depth > 5) return [];
  const codes: string[] = [];
  if ("code" in error && typeof error.code === "string") codes.push(error.code);
  if ("cause" in error) codes.push(...errorCodes(error.cause, depth + 1));
  if (error instanceof AggregateError) for (const inner of error.errors) codes.push(...errorCodes(inner, depth + 1));
  return codes;
}

/** True when a fetch failed before any byte of the request was written (refused, DNS, TLS…). */
export function failedWhileConnecting(error: unknown): boolean {
  const codes = errorCodes(error);
  return codes.some(
    (code) => CONNECT_PHASE_CODES.has(code) || code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_"),
  );
}

/** The id of the JSON-RPC request (not a notification) in a POST body, as the SDK serializes it. */
/** A W3C `traceparent`: version, trace id, parent id, flags. */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The id of the JSON-RPC request a POST carries (none for a notification or a response), and the
 * W3C trace context in its `params._meta`, if any.
 */
function requestOf(body: unknown): { id?: string | number; traceparent?: string } {
  if (typeof body !== "string") return {};
  try {
    const message: unknown = JSON.parse(body);
    if (typeof message !== "object" || message === null || !("method" in message) || !("id" in message)) return {};
    const id = typeof message.id === "string" || typeof message.id === "number" ? message.id : undefined;
    const params = "params" in message ? message.params : undefined;
    const meta = typeof params === "object" && params !== null && "_meta" in params ? params._meta : undefined;
    const traceparent =
      typeof meta === "object" && meta !== null && "traceparent" in meta ? meta.traceparent : undefined;
    return {
      ...(id === undefined ? {} : { id }),
      ...(typeof traceparent === "string" && TRACEPARENT.test(traceparent) ? { traceparent } : {}),
    };
  } catch {
    return {};
  }
}

/** The headers with `name` set, unless they set it already. */
function withHeader(headers: RequestInit["headers"], name: string, value: string): Headers {
  const merged = new Headers(headers);
  if (!merged.has(name)) merged.set(name, value);
  return merged;
}

/** Facts about a connection as a whole, for failures outside any watched request. */
export interface ConnectionObservations {
  refusal?: HttpRefusal;
  fetchError?: unknown;
}

/**
 * Builds the fetch for one connection. A GET without `Last-Event-ID` opens the session's
 * standalone SSE stream, where servers send what belongs to no request (tools/list_changed; and
 * some, like the Python SDK's, their questions to the client): it is passed through unwatched,
 * and a refusal of it (405 from a server without one) says nothing about the connection. A GET
 * with `Last-Event-ID` is the SDK resuming a broken response stream of a request; if it fails,
 * the request counts as interrupted at once instead of waiting for its timeout.
 */
export function createObservedFetch(observations: ConnectionObservations, baseFetch: FetchFn = fetch): FetchFn {
  return async (url, init) => {
    const method = (init?.method ?? "GET").toUpperCase();
    const resuming = method === "GET" && new Headers(init?.headers).has("last-event-id");
    if (method === "GET" && !resuming) return outsideAnyCall(() => baseFetch(url, init));
    const { id: requestId, traceparent } = requestOf(init?.body);
    const watch = resuming || requestId !== undefined ? requestScope.getStore() : undefined;
    // Nobody waits for a notification's POST (e.g. a cancellation sent to a server that hangs).
    const bound = !watch && method === "POST" ? AbortSignal.timeout(UNWATCHED_POST_MS) : undefined;
    const signals = [init?.signal, watch?.signal, bound].filter((s): s is AbortSignal => s != null);
    if (watch && !resuming) {
      watch.sent = true;
      watch.requestId = requestId;
    }
    // The transport's own signal lives as long as the session: the link to it goes when the
    // request is answered, or, unwatched, when `bound` fires and aborts the exchange as before.
    const linked = signals.length > 1 ? linkSignals(signals) : undefined;
    if (linked && watch) {
      if (watch.settled) linked.unlink();
      else watch.afterSettled.push(linked.unlink);
    }
    let response: Response;
    try {
      const signal = linked?.signal ?? signals[0] ?? null;
      // The trace context of a call travels in `_meta` (MCP's convention) and in the W3C header,
      // so a server's ordinary HTTP instrumentation joins the call's trace too.
      const headers = traceparent === undefined ? init?.headers : withHeader(init?.headers, "traceparent", traceparent);
      response = await outsideAnyCall(() => baseFetch(url, { ...init, ...(headers ? { headers } : {}), signal }));
    } catch (error) {
      observations.fetchError = error;
      if (watch && resuming)
        watch.onBroken(
          new Error(`resuming the response stream failed: ${error instanceof Error ? error.message : String(error)}`),
        );
      else if (watch) {
        watch.fetchError = error;
        watch.sent = !failedWhileConnecting(error);
      }
      throw error;
    }
    if (!response.ok) {
      const body = await response
        .clone()
        .text()
        .catch(() => "");
      const refusal = {
        status: response.status,
        wwwAuthenticate: response.headers.get("www-authenticate") ?? undefined,
        body: body.slice(0, 2000),
      };
      observations.refusal = refusal;
      if (watch && resuming) watch.onBroken(new Error(`resuming the response stream failed: HTTP ${response.status}`));
      else if (watch) watch.refusal = refusal;
      return response;
    }
    // A JSON answer needs no watching: the SDK reads it whole and a broken body fails the request.
    const isEventStream = /^text\/event-stream\b/i.test(response.headers.get("content-type") ?? "");
    if (!watch || !response.body || !isEventStream) return response;
    return new Response(watchEventStream(response.body, watch), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
