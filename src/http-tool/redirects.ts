/**
 * Derives the next hop from a redirect response, by hand rather than by undici, so that every
 * hop goes back through the allow-list, the address policy and a freshly pinned connection.
 * The method rules follow the Fetch standard. Headers crossing to another origin go by an
 * allow-list, not by guessing which names carry credentials: a custom credential header
 * (`x-functions-key`, `ocp-apim-subscription-key`, `x-goog-iap-jwt-assertion`…) has no name a
 * pattern could know, so only headers known to carry none survive the change of origin.
 */
import { HttpRefusal } from "./http-refusal.ts";
import type { HopRequest } from "./request-check.ts";

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

// Headers that describe the dropped body once a redirect turns the request into a GET.
const BODY_HEADERS = ["content-type", "content-encoding", "content-language", "content-location"];

/**
 * What a cross-origin redirect keeps of the request's headers, and `content-type` when the body
 * goes along (307, 308). `accept-encoding` is the fetcher's own (the codings it decodes).
 */
export const CROSS_ORIGIN_HEADERS: ReadonlySet<string> = new Set([
  "accept",
  "accept-language",
  "user-agent",
  "idempotency-key",
  "accept-encoding",
]);

/** Null when the response is not a redirect to follow (not 301/302/303/307/308, or no Location). */
export function nextHop(current: HopRequest, status: number, location: string | undefined): HopRequest | null {
  if (!REDIRECT_STATUSES.has(status) || location === undefined || location === "") return null;
  let url: URL;
  try {
    url = new URL(location, current.url);
  } catch {
    throw new HttpRefusal("url", current.url.hostname, "redirect Location does not parse");
  }

  let headers = { ...current.headers };
  let { method, body } = current;
  const toGet =
    (status === 303 && method !== "GET" && method !== "HEAD") ||
    ((status === 301 || status === 302) && method === "POST");
  if (toGet) {
    method = "GET";
    body = undefined;
    for (const name of BODY_HEADERS) delete headers[name];
  }
  if (url.origin !== current.url.origin) {
    // Dropped for good: a later redirect back to the first origin does not restore them.
    const keeps = (name: string) => CROSS_ORIGIN_HEADERS.has(name) || (name === "content-type" && body !== undefined);
    headers = Object.fromEntries(Object.entries(headers).filter(([name]) => keeps(name)));
  }
  return { url, method, headers, body };
}
