/**
 * The outbound target policy: where Rewind's own processes may connect when a tenant chose the
 * URL — an MCP server's (registration, calls, schema checks) or an events endpoint's. With API
 * keys set (tenants), the http tool's address rules apply: a host name is resolved once per
 * connection, every answer is checked, the sockets go to the checked addresses only, and every
 * redirect is checked the same way before it is followed. The operator's trusted targets
 * (REWIND_TRUSTED_TARGETS) are let through: a trusted host whatever it resolves to, an address in
 * a trusted range whatever the rules say of it. Without keys (loopback development) nothing is
 * checked and requests go out as plain fetches, as they always did.
 *
 * A refusal is a TargetRefusal, thrown before any socket is opened: a DNS failure and a private
 * answer read the same, and nothing in it depends on what listens at the target.
 */
import { HttpRefusal } from "./http-refusal.ts";
import { createPinnedFetch, type PinnedFetch } from "./pinned-transport.ts";
import { nextHop } from "./redirects.ts";
import type { HopRequest } from "./request-check.ts";
import { defaultResolver, resolveAllChecked, type ResolvedAddress, type Resolver } from "./resolve.ts";
import { TargetRefusal, targetOf } from "./target-refusal.ts";
import { NO_TRUSTED_TARGETS, trustedTargetMatcher, type TrustedTargets } from "./trusted-targets.ts";

export type TargetFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface TargetPolicyOptions {
  /** Checks on. Off (no API keys): every target is dialled with a plain fetch. */
  guarded: boolean;
  /** The operator's exceptions. Default: none. */
  trusted?: TrustedTargets;
  /** How host names become addresses. Default: the OS resolver (`dns.lookup`, all answers). */
  resolve?: Resolver;
  /** Bound of connecting to one address, and of a lookup nobody else bounds. Default 10 000 ms. */
  connectTimeoutMs?: number;
  /** Redirects one request follows. Default 5. */
  maxRedirects?: number;
}

export interface TargetSession {
  /** `fetch` for one connection's life; throws TargetRefusal for a target (or redirect) refused. */
  fetch: TargetFetch;
  /** Closes the session's sockets. */
  close(): Promise<void>;
}

export interface TargetPolicy {
  readonly guarded: boolean;
  /**
   * Throws TargetRefusal unless `url` may be dialled: resolves the name (bounded by the connect
   * timeout unless `signal` bounds it), connects nowhere. Only a trusted name's failed lookup and
   * the caller's abort throw something else.
   */
  check(url: string, signal?: AbortSignal): Promise<void>;
  /**
   * A fetch for one connection (an MCP session, an event delivery): each origin is checked once
   * and its sockets pinned for the session's life. `followRedirects: false` hands 3xx answers
   * back as they are. Default true.
   */
  session(options?: { followRedirects?: boolean }): TargetSession;
}

const PLAIN_SESSION: TargetSession = { fetch: (url, init) => fetch(url, init), close: () => Promise.resolve() };

/**
 * @example
 * const targets = createTargetPolicy({ guarded: config.outbound.guarded, trusted: config.outbound.trusted });
 * await targets.check("http://127.0.0.1:8080/admin"); // throws TargetRefusal when guarded
 */
export function createTargetPolicy(options: TargetPolicyOptions): TargetPolicy {
  const resolve = options.resolve ?? defaultResolver;
  const trusted = trustedTargetMatcher(options.trusted ?? NO_TRUSTED_TARGETS);
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const maxRedirects = options.maxRedirects ?? 5;

  async function addressesOf(url: URL, signal: AbortSignal | null | undefined): Promise<ResolvedAddress[]> {
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new TargetRefusal(targetOf(url));
    const hostTrusted = trusted.trustsHost(url.hostname);
    try {
      return await resolveAllChecked(url.hostname, {
        resolve,
        allowLoopback: false,
        signal: signal ?? AbortSignal.timeout(connectTimeoutMs),
        trusted: hostTrusted ? () => true : (address) => trusted.trustsAddress(address),
      });
    } catch (error) {
      if (!(error instanceof HttpRefusal)) throw error; // the caller's abort, as it was
      // A trusted host's lookup failure is the operator's to see; for any other name it reads
      // as a refusal, so that which internal names exist is not told either.
      if (hostTrusted) throw Object.assign(new Error(`${url.hostname} did not resolve`), { code: "ENOTFOUND" });
      throw new TargetRefusal(targetOf(url));
    }
  }

  function guardedSession(followRedirects: boolean): TargetSession {
    const pinned = new Map<string, Promise<PinnedFetch>>();
    let closed = false;

    function pinnedFor(url: URL, signal: AbortSignal | null | undefined): Promise<PinnedFetch> {
      let entry = pinned.get(url.origin);
      if (!entry) {
        const created = addressesOf(url, signal).then((addresses) =>
          createPinnedFetch({ url, addresses, connectTimeoutMs }),
        );
        // A failed check is not kept: the next request checks again (and refuses again).
        created.catch(() => {
          if (pinned.get(url.origin) === created) pinned.delete(url.origin);
        });
        pinned.set(url.origin, created);
        entry = created;
      }
      return entry;
    }

    async function sessionFetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
      if (closed) throw new Error("the connection is closed");
      const first = typeof input === "string" ? new URL(input) : input;
      const replayable = init.body === undefined || init.body === null || typeof init.body === "string";
      let hop: HopRequest = {
        url: first,
        method: (init.method ?? "GET").toUpperCase(),
        headers: headersOf(init.headers),
        body: typeof init.body === "string" ? init.body : undefined,
      };
      for (let redirects = 0; ; redirects++) {
        const through = await pinnedFor(hop.url, init.signal);
        const sent =
          redirects === 0 ? init : { ...init, method: hop.method, headers: hop.headers, body: hop.body ?? null };
        const response = await through.fetch(hop.url, sent);
        if (!followRedirects || !replayable) return response;
        const next = nextRedirect(hop, response);
        if (!next) return response;
        await response.body?.cancel().catch(() => undefined);
        if (redirects >= maxRedirects) throw new Error(`${targetOf(first)} redirected more than ${maxRedirects} times`);
        hop = next;
      }
    }

    return {
      fetch: sessionFetch,
      async close() {
        closed = true;
        const all = [...pinned.values()];
        pinned.clear();
        await Promise.all(
          all.map((entry) =>
            entry.then(
              (p) => p.close(),
              () => undefined,
            ),
          ),
        );
      },
    };
  }

  return {
    guarded: options.guarded,
    async check(url, signal) {
      if (!options.guarded) return;
      if (!URL.canParse(url)) throw new TargetRefusal(targetOf(url));
      const parsed = new URL(url);
      try {
        await addressesOf(parsed, signal ?? AbortSignal.timeout(connectTimeoutMs));
      } catch (error) {
        // A lookup that timed out is a refusal too, unless the name is the operator's.
        if (error instanceof TargetRefusal || trusted.trustsHost(parsed.hostname) || signal?.aborted === true)
          throw error;
        throw new TargetRefusal(targetOf(parsed));
      }
    },
    session(sessionOptions) {
      return options.guarded ? guardedSession(sessionOptions?.followRedirects !== false) : PLAIN_SESSION;
    },
  };
}

function headersOf(init: RequestInit["headers"]): Record<string, string> {
  const headers: Record<string, string> = {};
  new Headers(init).forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

/** The next hop of a redirect (its target is checked when it is dialled), or null. */
function nextRedirect(hop: HopRequest, response: Response): HopRequest | null {
  try {
    return nextHop(hop, response.status, response.headers.get("location") ?? undefined);
  } catch {
    return null; // a Location that does not parse: the 3xx goes back as it is
  }
}
