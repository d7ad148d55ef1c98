/**
 * The operator's exceptions to the outbound target policy (REWIND_TRUSTED_TARGETS): host names a
 * tenant's URL may name whatever they resolve to, and address ranges a tenant's URL may reach
 * (an MCP server on the private network, say). config.ts parses and validates the setting into
 * this shape; this file only matches against it, with node:net's BlockList, which also matches
 * an IPv4-mapped IPv6 address against the IPv4 range it carries.
 */
import { BlockList, isIP } from "node:net";
import { matchableHost } from "./allow-list.ts";

export interface TrustedTargets {
  /** Canonical lower-case names (`mcp.internal`), or `*.example.com` for its subdomains only. */
  hosts: string[];
  /** Canonical ranges, `address/prefix`: `10.0.0.0/8`, `127.0.0.1/32`, `fd00::/8`. */
  cidrs: string[];
}

export const NO_TRUSTED_TARGETS: TrustedTargets = { hosts: [], cidrs: [] };

export interface TrustedTargetMatcher {
  /** `hostname` as `URL.hostname` gives it; IP literals are never trusted by name, only by range. */
  trustsHost(hostname: string): boolean;
  trustsAddress(address: string): boolean;
}

export function trustedTargetMatcher(targets: TrustedTargets): TrustedTargetMatcher {
  const ranges = new BlockList();
  for (const cidr of targets.cidrs) {
    const [address = "", prefix = ""] = cidr.split("/");
    ranges.addSubnet(address, Number(prefix), isIP(address) === 6 ? "ipv6" : "ipv4");
  }
  const exact = new Set(targets.hosts.filter((h) => !h.startsWith("*.")));
  const suffixes = targets.hosts.filter((h) => h.startsWith("*.")).map((h) => h.slice(1));
  return {
    trustsHost(hostname) {
      const host = matchableHost(hostname);
      if (host.startsWith("[") || isIP(host) !== 0) return false;
      return exact.has(host) || suffixes.some((suffix) => host.endsWith(suffix));
    },
    trustsAddress(address) {
      const family = isIP(address);
      return family !== 0 && ranges.check(address, family === 6 ? "ipv6" : "ipv4");
    },
  };
}
