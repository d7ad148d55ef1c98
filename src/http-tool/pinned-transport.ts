/**
 * Sends requests to addresses that were already checked. It is the only file that imports
 * undici: each connection goes through an Agent whose connect step ignores the host name undici
 * would connect to and dials the pinned IP instead, while the request keeps the URL's origin (so
 * the Host header is the original host) and TLS keeps the host name as SNI and as the name the
 * certificate is verified against. An explicit Agent also means proxy environment variables are
 * never consulted (they are read only by undici's EnvHttpProxyAgent).
 *
 * Two users: the http tool's fetcher sends one hop per Agent (`withPinnedRequest`); the outbound
 * target policy gives a connection (an MCP session, an event delivery) a fetch whose Agent lives
 * as long as it does (`createPinnedFetch`), dialling the checked addresses in order.
 */
import { isIP, type LookupFunction } from "node:net";
import type { Readable } from "node:stream";
import { Agent, buildConnector, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from "undici";
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
  /** Told once the connection is up (TLS included): from then on the request may have reached the server. */
  onConnected?: () => void;
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
export async function withPinnedRequest<T>(
  hop: PinnedHop,
  consume: (response: PinnedResponse) => Promise<T>,
): Promise<T> {
  const agent = new Agent({
    connect: pinnedConnector(hop.url, [hop.address], hop.connectTimeoutMs, hop.onConnected),
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

export interface PinnedFetchOptions {
  /** The origin the fetch is for: its host name is the TLS server name. */
  url: URL;
  /** Checked addresses of the origin's host, dialled in this order until one connects. */
  addresses: ResolvedAddress[];
  connectTimeoutMs: number;
}

export interface PinnedFetch {
  /** `fetch` through the pinned Agent; redirects are the caller's (`redirect: "manual"`). */
  fetch(url: URL, init: RequestInit): Promise<Response>;
  /** Closes the Agent's sockets, streams in flight included. */
  close(): Promise<void>;
}

export function createPinnedFetch(options: PinnedFetchOptions): PinnedFetch {
  const agent = new Agent({
    connect: pinnedConnector(options.url, options.addresses, options.connectTimeoutMs),
    allowH2: false,
  });
  return {
    async fetch(url, init) {
      // undici's own fetch (the one the Agent belongs to); its types differ from the DOM's only in name.
      const response = await undiciFetch(url, {
        ...(init as UndiciRequestInit),
        dispatcher: agent,
        redirect: "manual",
      });
      return response as unknown as Response;
    },
    close: () => agent.destroy().catch(() => undefined),
  };
}

function pinnedConnector(
  url: URL,
  addresses: ResolvedAddress[],
  connectTimeoutMs: number,
  onConnected?: () => void,
): buildConnector.connector {
  const connectors = addresses.map((address) => {
    // Belt and braces: with an IP as host Node does no lookup, but if anything asked, it would get
    // the checked address and nothing else.
    const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
      if (lookupOptions.all) callback(null, [{ address: address.address, family: address.family }]);
      else callback(null, address.address, address.family);
    };
    return {
      address: address.address,
      connect: buildConnector({ allowH2: false, maxCachedSessions: 0, timeout: connectTimeoutMs, lookup }),
    };
  });
  const bracketless = url.hostname.replace(/^\[(.*)\]$/, "$1");
  // SNI carries names only; for an IP-literal URL the certificate is checked against the IP.
  const servername = isIP(bracketless) !== 0 ? undefined : bracketless.replace(/\.$/, "");
  return function connectPinned(connectOptions, callback) {
    const attempt = (index: number): void => {
      const pinned = connectors[index];
      if (!pinned) {
        callback(new Error("no checked address to connect to"), null);
        return;
      }
      pinned.connect(
        {
          ...connectOptions,
          hostname: pinned.address, // SSRF invariant: the socket goes to a checked address, never to a re-resolved name
          servername: connectOptions.protocol === "https:" ? servername : undefined,
        },
        (...result) => {
          if (result[0] !== null && index + 1 < connectors.length) attempt(index + 1);
          else {
            if (result[0] === null) onConnected?.();
            callback(...result);
          }
        },
      );
    };
    attempt(0);
  };
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}
