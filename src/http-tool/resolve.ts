/**
 * Turns a URL's host into the one address the connection will go to. The name is resolved once
 * per hop, every answer must pass the address policy (one refused answer refuses the request, so
 * a DNS answer mixing public and private addresses cannot be used to reach the private one), and
 * the caller connects to the returned address (the outbound target policy: to the returned
 * addresses, in order, each of them checked) and nothing else: there is no second lookup that a
 * rebinding DNS server could answer differently.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { classifyAddress } from "./address-policy.ts";
import { HttpRefusal } from "./http-refusal.ts";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses. Injected in tests; the default asks the OS. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const defaultResolver: Resolver = async function defaultResolver(hostname) {
  // `order: "verbatim"` is the non-deprecated spelling of `verbatim: true`: answers unsorted.
  const answers = await lookup(hostname, { all: true, order: "verbatim" });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

export interface ResolveCheckedOptions {
  resolve: Resolver;
  allowLoopback: boolean;
  signal: AbortSignal;
  /**
   * Addresses let through whatever the address policy says: the operator's trusted ranges of
   * the outbound target policy (trusted-targets.ts). Default: none.
   */
  trusted?: (address: string) => boolean;
}

/** `hostname` is `URL.hostname`: IPv6 literals keep their brackets. */
export async function resolveChecked(hostname: string, options: ResolveCheckedOptions): Promise<ResolvedAddress> {
  const [pinned] = await resolveAllChecked(hostname, options);
  if (!pinned) throw new HttpRefusal("dns", hostname, "no addresses");
  return pinned;
}

/** Every answer, each one checked, in the resolver's order; throws on the first refused one. */
export async function resolveAllChecked(hostname: string, options: ResolveCheckedOptions): Promise<ResolvedAddress[]> {
  const literal = hostname.startsWith("[") ? hostname.slice(1, -1) : hostname;
  const literalFamily = isIP(literal);
  const answers =
    literalFamily === 0
      ? await lookupOnce(hostname, options)
      : [{ address: literal, family: literalFamily === 6 ? 6 : 4 } satisfies ResolvedAddress];

  for (const answer of answers) {
    if (options.trusted?.(answer.address) === true) continue;
    const verdict = classifyAddress(answer.address, { allowLoopback: options.allowLoopback });
    if (!verdict.allowed) throw new HttpRefusal(`address:${verdict.rule}`, hostname);
  }
  if (answers.length === 0) throw new HttpRefusal("dns", hostname, "no addresses");
  // The family comes from the address itself, not from what the resolver claimed.
  return answers.map(({ address }) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
}

async function lookupOnce(hostname: string, options: ResolveCheckedOptions): Promise<ResolvedAddress[]> {
  options.signal.throwIfAborted();
  let onAbort: (() => void) | undefined;
  // dns.lookup cannot be cancelled; racing it keeps the one deadline covering DNS too.
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(options.signal.reason);
    options.signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([options.resolve(hostname), aborted]);
  } catch (error) {
    if (options.signal.aborted) throw error;
    throw new HttpRefusal("dns", hostname, errorCode(error));
  } finally {
    if (onAbort) options.signal.removeEventListener("abort", onAbort);
  }
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}
