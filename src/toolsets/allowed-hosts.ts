/**
 * The http tool's allow-list as pinned: lower-case, no trailing dot, each entry an exact host
 * or `*.domain` (subdomains only), with an optional port. Normalizing before pinning makes two
 * spellings of the same list give the same toolset id.
 */
export class AllowedHostError extends Error {
  override name = "AllowedHostError";
}

const LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
const HOST_ENTRY = new RegExp(`^(\\*\\.)?(${LABEL}(?:\\.${LABEL})*)(?::(\\d{1,5}))?$`);

export function normalizeAllowedHost(entry: string): string {
  const lowered = entry
    .trim()
    .toLowerCase()
    .replace(/\.(?=:\d+$|$)/, "");
  const match = HOST_ENTRY.exec(lowered);
  const port = match?.[3] === undefined ? undefined : Number(match[3]);
  if (!match || (port !== undefined && (port < 1 || port > 65535))) {
    throw new AllowedHostError(`"${entry}" is not a host name, *.domain or host:port`);
  }
  if (match[1] && !match[2]?.includes("."))
    throw new AllowedHostError(`"${entry}": a wildcard needs a domain with at least two labels`);
  return lowered;
}

export function normalizeAllowedHosts(entries: string[]): string[] {
  return [...new Set(entries.map(normalizeAllowedHost))].sort();
}
