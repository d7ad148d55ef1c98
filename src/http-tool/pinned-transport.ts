/**
 * Sends one hop of an http tool request to an address that was already checked. It is the only
 * file that imports undici: each hop gets its own Agent whose connect step ignores the host name
 * undici would connect to and dials the pinned IP instead, while the request keeps the URL's
 * origin (so the Host header is the original host) and TLS keeps the host name as SNI and as the
 * name the certificate is verified against. An explicit Agent also means proxy environment
 * variables are never consulted (they are read only by undici's EnvHttpProxyAgent).
 */
import { isIP, type LookupFunction } from "node:net";
import type { Readable } from "node:stream";
import { Agent, buildConnector } from "undici";
import type { ResolvedAddress } from "./resolve.ts";

export interface PinnedHop {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** The address `resolveChecked` returned for `url.hostname`. */
  address: ResolvedAddress;
  /** Aborts connect, headers and body: the fetcher's one deadline. */
  signal: AbortSignal;
  connectTimeoutMs: number;
}

export interface PinnedResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: Readable;
}

/**
 * Runs `consume` on the response, then closes the hop's connection whatever happened, so no
 * socket outlives the hop (a redirect gets a fresh, separately checked connection).
 */
export async function withPinnedRequest<T>(hop: PinnedHop, consume: (response: PinnedResponse) => Promise<T>): Promise<T> {
  const agent = new Agent({
    connect: pinnedConnector(hop),
    allowH2: false,
    connections: 1,
    // The fetcher's deadline covers headers and body; undici's own timers would only race it.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  let body: Readable | undefined;
  try {
    const response = await agent.request({
      origin: hop.url.origin,
      path: `${hop.url.pathname}${hop.url.search}`,
      method: hop.method,
      headers: hop.headers,
      body: hop.body ?? null,
      signal: hop.signal,
      reset: true,
    });
    // An unread body reports an abort when it is destroyed; readers see errors through
    // iteration, so nothing is lost by not letting that one become an uncaught exception.
    body = response.body.on("error", () => undefined);
    return await consume({
      status: response.statusCode,
      statusText: response.statusText,
      headers: flattenHeaders(response.headers),
      body,
    });
  } finally {
    body?.destroy();
    await agent.destroy().catch(() => undefined);
  }
}

function pinnedConnector(hop: PinnedHop): buildConnector.connector {
  const pinned = hop.address.address;
  // Belt and braces: with an IP as host Node does no lookup, but if anything asked, it would get
  // the checked address and nothing else.
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: pinned, family: hop.address.family }]);
    else callback(null, pinned, hop.address.family);
  };
  const connect = buildConnector({ allowH2: false, maxCachedSessions: 0, timeout: hop.connectTimeoutMs, lookup });
  const bracketless = hop.url.hostname.replace(/^\[(.*)\]$/, "$1");
  // SNI carries names only; for an IP-literal URL the certificate is checked against the IP.
  const servername = isIP(bracketless) !== 0 ? undefined : bracketless.replace(/\.$/, "");
  return function connectPinned(options, callback) {
    connect({
      ...options,
      hostname: pinned, // SSRF invariant: the socket goes to the checked address, never to a re-resolved name
      servername: options.protocol === "https:" ? servername : undefined,
    }, callback);
  };
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}
