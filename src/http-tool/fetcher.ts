/**
 * The http tool's fetcher: what a script's `fetch` becomes once it leaves the sandbox. Each hop
 * is checked against the allow-list, resolved once, checked against the address policy and sent
 * over a connection pinned to the checked address; redirects are followed by hand. One deadline
 * covers every hop from the first DNS lookup to the last body byte. The result is a plain JSON
 * object, fit for a journal; every refusal is an `HttpRefusal` naming its rule.
 */
import { checkAllowList } from "./allow-list.ts";
import { ACCEPT_ENCODING, readBoundedBody } from "./body-reader.ts";
import { HttpRefusal } from "./http-refusal.ts";
import { withPinnedRequest } from "./pinned-transport.ts";
import { nextHop } from "./redirects.ts";
import { prepareRequest, type HopRequest, type HttpToolRequest } from "./request-check.ts";
import { defaultResolver, resolveChecked, type Resolver } from "./resolve.ts";

export interface HttpToolResponse {
  status: number;
  statusText: string;
  /** The URL of the last hop, after redirects. */
  url: string;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Decoded text, or base64 when the body is not text in its declared charset. */
  body: string;
  bodyEncoding: "utf8" | "base64";
  redirects: number;
}

export interface GuardedFetcherOptions {
  /** How host names become addresses. Default: the OS resolver (`dns.lookup`, all answers). */
  resolve?: Resolver;
  /**
   * Lets requests reach 127.0.0.0/8 and ::1, for tests against loopback servers. Default false.
   * Deliberately an option of the fetcher, not of any toolset or script document.
   */
  allowLoopbackForTests?: boolean;
  /** Largest body, counted after decoding. Default 5 MB. */
  maxBytes?: number;
  /** One deadline for DNS, connect, TLS, headers and body of all hops. Default 30 s. */
  timeoutMs?: number;
  /** Redirects followed; one more is refused. Default 5. */
  maxRedirects?: number;
  /** Sent when the script sets no User-Agent. Default `rewind-http-tool`. */
  userAgent?: string;
}

/** `timeoutMs`, when given, is this request's one deadline instead of the fetcher's (a tool policy's `timeout`). */
export type GuardedFetch = (
  request: HttpToolRequest,
  allowedHosts: readonly string[],
  signal?: AbortSignal,
  timeoutMs?: number,
) => Promise<HttpToolResponse>;

type HopOutcome = { redirect: HopRequest } | { response: HttpToolResponse };

export function createGuardedFetcher(options: GuardedFetcherOptions = {}): GuardedFetch {
  const resolve = options.resolve ?? defaultResolver;
  const allowLoopback = options.allowLoopbackForTests === true;
  const maxBytes = options.maxBytes ?? 5 * 1024 * 1024;
  const defaultTimeoutMs = options.timeoutMs ?? 30_000;
  const maxRedirects = options.maxRedirects ?? 5;
  const userAgent = options.userAgent ?? "rewind-http-tool";

  return async function guardedFetch(request, allowedHosts, signal, requestTimeoutMs) {
    let hop = prepareRequest(request, { userAgent, acceptEncoding: ACCEPT_ENCODING });
    const timeoutMs = requestTimeoutMs ?? defaultTimeoutMs;
    const startedAt = Date.now();
    const deadline = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([deadline, signal]) : deadline;

    for (let redirects = 0; ; redirects++) {
      const host = hop.url.hostname;
      const verdict = checkAllowList(hop.url, allowedHosts);
      if (!verdict.allowed) throw new HttpRefusal(verdict.rule, host);
      let phase: "connect" | "noResponse" | "network" = "connect";
      let outcome: HopOutcome;
      try {
        const address = await resolveChecked(host, { resolve, allowLoopback, signal: combined });
        const connectTimeoutMs = Math.max(1, timeoutMs - (Date.now() - startedAt));
        const onConnected = () => {
          phase = "noResponse";
        };
        outcome = await withPinnedRequest(
          { ...hop, address, signal: combined, connectTimeoutMs, onConnected },
          async (response): Promise<HopOutcome> => {
            const redirect = nextHop(hop, response.status, response.headers.location);
            if (redirect) {
              response.body.destroy();
              return { redirect };
            }
            phase = "network";
            const body = await readBoundedBody(response.body, response.headers, { maxBytes, host });
            const { status, statusText, headers } = response;
            return { response: { status, statusText, url: hop.url.href, headers, ...body, redirects } };
          },
        );
      } catch (error) {
        throw refusalFor(error, host, phase, signal, deadline);
      }
      if ("response" in outcome) return outcome.response;
      if (redirects >= maxRedirects) throw new HttpRefusal("redirects", host, `more than ${maxRedirects} redirects`);
      hop = outcome.redirect;
    }
  };
}

function refusalFor(
  error: unknown,
  host: string,
  phase: "connect" | "noResponse" | "network",
  signal: AbortSignal | undefined,
  deadline: AbortSignal,
): HttpRefusal {
  // The caller's abort and the deadline win over whatever error the abort caused downstream.
  if (signal?.aborted) return new HttpRefusal("aborted", host);
  if (deadline.aborted) return new HttpRefusal("timeout", host, "the deadline passed");
  if (error instanceof HttpRefusal) return error;
  const code = (error as { code?: unknown } | null)?.code;
  return new HttpRefusal(phase, host, typeof code === "string" ? code : undefined);
}
