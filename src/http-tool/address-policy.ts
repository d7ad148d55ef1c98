/**
 * Decides whether the http tool may open a connection to one IP address. This is the SSRF gate:
 * every address a request would reach (a literal in the URL or every answer of the one DNS
 * lookup) passes through here, and only public unicast addresses survive. ipaddr.js knows the
 * IANA special-purpose ranges; this file adds what it lumps in with unicast (cloud metadata
 * endpoints, unallocated IPv6 space) and gives documentation and benchmarking ranges their name.
 * It is the only file that imports ipaddr.js.
 */
import ipaddr from "ipaddr.js";

export type AddressVerdict = { allowed: true } | { allowed: false; rule: string };

export interface AddressPolicyOptions {
  /** Lets 127.0.0.0/8 and ::1 through, for tests against loopback servers. Default false. */
  allowLoopback?: boolean;
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];
const cidrs = (...texts: string[]): Cidr[] => texts.map((text) => ipaddr.parseCIDR(text));

// Checked before the library's ranges, so a metadata endpoint is reported as such (100.100.100.200
// would otherwise be "carrierGradeNat") and so public-looking ones (Azure's 168.63.129.16) are refused.
const NAMED_RANGES: [rule: string, ranges: Cidr[]][] = [
  [
    "metadata",
    cidrs(
      "169.254.169.254/32", // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle
      "169.254.170.2/32", // AWS ECS task metadata
      "169.254.169.253/32", // AWS VPC DNS
      "169.254.0.23/32", // Tencent Cloud
      "100.100.100.200/32", // Alibaba Cloud
      "192.0.0.192/32", // Oracle Cloud (legacy)
      "168.63.129.16/32", // Azure WireServer, a public address answered inside Azure
      "fd00:ec2::254/128", // AWS IMDS over IPv6
      "fd00:ec2::23/128", // AWS VPC DNS over IPv6
      "fd20:ce::254/128", // GCP metadata over IPv6
    ),
  ],
  ["documentation", cidrs("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32", "3fff::/20")],
  ["benchmarking", cidrs("198.18.0.0/15", "2001:2::/48")],
];

// Everything outside 2000::/3 is unallocated or special; ipaddr.js calls it "unicast".
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");

export function classifyAddress(text: string, options: AddressPolicyOptions = {}): AddressVerdict {
  if (!ipaddr.isValid(text)) return { allowed: false, rule: "invalid" };
  const parsed = ipaddr.parse(text);
  if (parsed.kind() === "ipv6" && ipaddr.process(text).kind() === "ipv4") {
    // IPv4-mapped (::ffff:a.b.c.d) is refused even when the embedded address is public.
    return embeddedVerdict(ipaddr.process(text) as ipaddr.IPv4);
  }
  return parsed.kind() === "ipv4"
    ? classifyV4(parsed as ipaddr.IPv4, options)
    : classifyV6(parsed as ipaddr.IPv6, options);
}

function classifyV4(address: ipaddr.IPv4, options: AddressPolicyOptions): AddressVerdict {
  const named = namedRule(address);
  if (named) return { allowed: false, rule: named };
  const range = address.range();
  if (range === "unicast") return { allowed: true };
  if (range === "loopback" && options.allowLoopback === true) return { allowed: true };
  return { allowed: false, rule: range };
}

function classifyV6(address: ipaddr.IPv6, options: AddressPolicyOptions): AddressVerdict {
  const named = namedRule(address);
  if (named) return { allowed: false, rule: named };
  const range = address.range();
  if (range === "loopback" && options.allowLoopback === true) return { allowed: true };
  const embedded = embeddedIpv4(address, range);
  // IPv4 inside IPv6 (compatible, SIIT, NAT64, 6to4, Teredo) is refused outright: the rule names
  // the embedded address's problem when it has one, "ipv4-in-ipv6" otherwise.
  if (embedded) return embeddedVerdict(embedded);
  if (range !== "unicast") return { allowed: false, rule: range };
  if (!address.match(GLOBAL_UNICAST_V6)) return { allowed: false, rule: "reserved" };
  // ISATAP interface ids (…:0:5efe:a.b.c.d, …:200:5efe:a.b.c.d) sit under ordinary prefixes, so
  // they are re-checked rather than refused: refused only when the embedded IPv4 is not public.
  const p = address.parts;
  if (((p[4] ?? 0) & 0xfcff) === 0 && p[5] === 0x5efe) {
    const isatap = v4FromWords(p[6], p[7]);
    const verdict = classifyV4(isatap, {});
    if (!verdict.allowed) return verdict;
  }
  return { allowed: true };
}

function embeddedIpv4(address: ipaddr.IPv6, range: string): ipaddr.IPv4 | "opaque" | null {
  const p = address.parts;
  const upperZero = p.slice(0, 6).every((word) => word === 0);
  if (upperZero && range !== "unspecified" && range !== "loopback") return v4FromWords(p[6], p[7]); // ::a.b.c.d
  if (range === "rfc6145") return v4FromWords(p[6], p[7]); // ::ffff:0:a.b.c.d
  if (range === "rfc6052") {
    // 64:ff9b::/96 carries the IPv4 in the last 32 bits; in 64:ff9b:1::/48 its place depends on
    // a prefix length the network chose, so it cannot be located.
    return p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0 ? v4FromWords(p[6], p[7]) : "opaque";
  }
  if (range === "6to4") return v4FromWords(p[1], p[2]); // 2002:aabb:ccdd::/48
  if (range === "teredo") return v4FromWords((p[6] ?? 0) ^ 0xffff, (p[7] ?? 0) ^ 0xffff); // client, obfuscated
  return null;
}

function embeddedVerdict(embedded: ipaddr.IPv4 | "opaque"): AddressVerdict {
  if (embedded !== "opaque") {
    const verdict = classifyV4(embedded, {});
    if (!verdict.allowed) return verdict;
  }
  return { allowed: false, rule: "ipv4-in-ipv6" };
}

function namedRule(address: ipaddr.IPv4 | ipaddr.IPv6): string | undefined {
  for (const [rule, ranges] of NAMED_RANGES) {
    if (ranges.some(([base, bits]) => base.kind() === address.kind() && address.match(base, bits))) return rule;
  }
  return undefined;
}

function v4FromWords(high: number | undefined, low: number | undefined): ipaddr.IPv4 {
  const h = high ?? 0;
  const l = low ?? 0;
  return new ipaddr.IPv4([h >> 8, h & 0xff, l >> 8, l & 0xff]);
}
