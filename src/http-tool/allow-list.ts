/**
 * Matches a URL against a toolset's pinned `allowedHosts`, the first of the http tool's checks,
 * applied to the script's URL and again to every redirect's target. Entries are exact hosts or
 * `*.domain` (subdomains only), optionally `host:port`; without a port only the scheme's default
 * port is allowed. An IP literal must be listed exactly, and still goes through the address policy.
 */
import { isIP } from "node:net";

export type AllowListVerdict =
  { allowed: true } | { allowed: false; rule: "scheme" | "userinfo" | "host" | "notAllowed" | "port" };

interface Entry {
  host: string;
  wildcard: boolean;
  port: number | null;
}

const DEFAULT_PORTS: Record<string, number> = { "http:": 80, "https:": 443 };

export function checkAllowList(url: URL, allowedHosts: readonly string[]): AllowListVerdict {
  const defaultPort = DEFAULT_PORTS[url.protocol];
  if (defaultPort === undefined) return { allowed: false, rule: "scheme" };
  if (url.username !== "" || url.password !== "") return { allowed: false, rule: "userinfo" };
  const host = matchableHost(url.hostname);
  if (host === "") return { allowed: false, rule: "host" };
  const port = url.port === "" ? defaultPort : Number(url.port);
  const literal = isIpLiteralHost(host);

  let hostListed = false;
  for (const entry of allowedHosts.map(parseEntry)) {
    if (!entry) continue;
    const hostMatches = entry.wildcard
      ? !literal && host.endsWith(`.${entry.host}`) // subdomains only: never the apex itself
      : host === entry.host;
    if (!hostMatches) continue;
    hostListed = true;
    if (entry.port === null ? port === defaultPort : port === entry.port) return { allowed: true };
  }
  return { allowed: false, rule: hostListed ? "port" : "notAllowed" };
}

/** True for `1.2.3.4` and `[::1]`, the two shapes an IP host takes once `new URL()` has parsed it. */
export function isIpLiteralHost(hostname: string): boolean {
  return hostname.startsWith("[") || isIP(hostname) === 4;
}

/** Lower-case without one trailing dot: `API.github.com.` and `api.github.com` are one host. */
export function matchableHost(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, "");
}

function parseEntry(raw: string): Entry | null {
  const match = /^(.*?)(?::(\d{1,5}))?$/.exec(raw.trim());
  if (!match?.[1]) return null;
  const wildcard = match[1].startsWith("*.");
  const name = wildcard ? match[1].slice(2) : match[1];
  let host: string;
  try {
    // The URL parser canonicalizes the entry the same way it canonicalizes request URLs
    // (IPv6 compression, IDNA, numeric IPv4 forms), so the comparison is like for like.
    host = matchableHost(new URL(`http://${name}/`).hostname);
  } catch {
    return null;
  }
  if (host === "" || (wildcard && isIpLiteralHost(host))) return null;
  return { host, wildcard, port: match[2] === undefined ? null : Number(match[2]) };
}
