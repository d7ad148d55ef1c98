/**
 * Derives the next hop from a redirect response, by hand rather than by undici, so that every
 * hop goes back through the allow-list, the address policy and a freshly pinned connection.
 * The method and credential rules follow the Fetch standard, with a wider notion of credentials.
 */
import { HttpRefusal } from "./http-refusal.ts";
import type { HopRequest } from "./request-check.ts";

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

// Headers that describe the dropped body once a redirect turns the request into a GET.
const BODY_HEADERS = ["content-type", "content-encoding", "content-language", "content-location"];

const CREDENTIAL_HEADERS = new Set(["authorization", "proxy-authorization", "cookie", "cookie2", "private-token"]);
// Custom credential headers have no fixed names (x-api-key, x-auth-token, x-goog-api-key, …).
const CREDENTIAL_LIKE = /auth|token|api-?key|secret|session|passw|credential|signature/i;

/** Null when the response is not a redirect to follow (not 301/302/303/307/308, or no Location). */
export function nextHop(current: HopRequest, status: number, location: string | undefined): HopRequest | null {
  if (!REDIRECT_STATUSES.has(status) || location === undefined || location === "") return null;
  let url: URL;
  try {
    url = new URL(location, current.url);
  } catch {
    throw new HttpRefusal("url", current.url.hostname, "redirect Location does not parse");
  }

  const headers = { ...current.headers };
  let { method, body } = current;
  const toGet = (status === 303 && method !== "GET" && method !== "HEAD") || ((status === 301 || status === 302) && method === "POST");
  if (toGet) {
    method = "GET";
    body = undefined;
    for (const name of BODY_HEADERS) delete headers[name];
  }
  if (url.origin !== current.url.origin) {
    // Dropped for good: a later redirect back to the first origin does not restore them.
    for (const name of Object.keys(headers)) {
      if (CREDENTIAL_HEADERS.has(name) || CREDENTIAL_LIKE.test(name)) delete headers[name];
    }
  }
  return { url, method, headers, body };
}
