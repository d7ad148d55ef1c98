/**
 * The address classifier on every spelling of a non-public address a URL parser accepts. Each
 * URL goes through `new URL()` first, as in the fetcher, so decimal, octal, hex and short IPv4
 * forms arrive canonicalized. Classification only: nothing here opens a connection.
 */
import { describe, expect, it } from "vitest";
import { classifyAddress } from "../../src/http-tool/index.ts";

function hostOf(url: string): string {
  const { hostname } = new URL(url);
  return hostname.startsWith("[") ? hostname.slice(1, -1) : hostname;
}

const REFUSED: [url: string, rule: string][] = [
  // IPv4 loopback in the notations WHATWG URL parsing accepts
  ["http://127.0.0.1/", "loopback"],
  ["http://2130706433/", "loopback"],
  ["http://0177.0.0.1/", "loopback"],
  ["http://017700000001/", "loopback"],
  ["http://0x7f.1/", "loopback"],
  ["http://0x7f000001/", "loopback"],
  ["http://127.1/", "loopback"],
  ["http://127.255.255.254/", "loopback"],
  // IPv6 loopback and IPv4 carried inside IPv6
  ["http://[::1]/", "loopback"],
  ["http://[0:0:0:0:0:0:0:1]/", "loopback"],
  ["http://[::ffff:127.0.0.1]/", "loopback"],
  ["http://[::ffff:7f00:1]/", "loopback"],
  ["http://[0:0:0:0:0:ffff:a9fe:a9fe]/", "metadata"],
  ["http://[::ffff:10.0.0.1]/", "private"],
  ["http://[::ffff:8.8.8.8]/", "ipv4-in-ipv6"],
  ["http://[::127.0.0.1]/", "loopback"],
  ["http://[::8.8.8.8]/", "ipv4-in-ipv6"],
  ["http://[::ffff:0:7f00:1]/", "loopback"],
  ["http://[64:ff9b::169.254.169.254]/", "metadata"],
  ["http://[64:ff9b::a00:1]/", "private"],
  ["http://[64:ff9b::8.8.8.8]/", "ipv4-in-ipv6"],
  ["http://[64:ff9b:1::a00:1]/", "ipv4-in-ipv6"],
  ["http://[2002:a00:1::1]/", "private"],
  ["http://[2002:7f00:1::]/", "loopback"],
  ["http://[2002:808:808::1]/", "ipv4-in-ipv6"],
  ["http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/", "private"], // Teredo, client 10.0.0.1
  ["http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/", "ipv4-in-ipv6"], // Teredo, client 8.8.8.8
  ["http://[2001:4860:1::5efe:a00:1]/", "private"], // ISATAP
  ["http://[2001:4860:1::200:5efe:a9fe:a9fe]/", "metadata"], // ISATAP, universal bit set
  // private, shared and link-local space
  ["http://10.0.0.1/", "private"],
  ["http://172.16.0.1/", "private"],
  ["http://172.31.255.255/", "private"],
  ["http://192.168.1.1/", "private"],
  ["http://100.64.0.1/", "carrierGradeNat"],
  ["http://100.127.255.254/", "carrierGradeNat"],
  ["http://169.254.1.1/", "linkLocal"],
  ["http://[fe80::1]/", "linkLocal"],
  ["http://[fc00::1]/", "uniqueLocal"],
  ["http://[fd12:3456::1]/", "uniqueLocal"],
  ["http://[fec0::1]/", "deprecatedSiteLocal"],
  // cloud metadata endpoints
  ["http://169.254.169.254/", "metadata"],
  ["http://0xa9fea9fe/", "metadata"],
  ["http://169.254.170.2/", "metadata"],
  ["http://100.100.100.200/", "metadata"],
  ["http://168.63.129.16/", "metadata"],
  ["http://[fd00:ec2::254]/", "metadata"],
  ["http://[fd20:ce::254]/", "metadata"],
  // unspecified, broadcast, multicast, reserved
  ["http://0.0.0.0/", "unspecified"],
  ["http://0/", "unspecified"],
  ["http://0.1.2.3/", "unspecified"],
  ["http://[::]/", "unspecified"],
  ["http://255.255.255.255/", "broadcast"],
  ["http://224.0.0.1/", "multicast"],
  ["http://239.255.255.250/", "multicast"],
  ["http://[ff02::1]/", "multicast"],
  ["http://240.0.0.1/", "reserved"],
  ["http://192.0.0.8/", "reserved"],
  ["http://[100::1]/", "discard"],
  ["http://[4000::1]/", "reserved"], // outside 2000::/3, which ipaddr.js calls unicast
  // documentation and benchmarking
  ["http://192.0.2.1/", "documentation"],
  ["http://198.51.100.7/", "documentation"],
  ["http://203.0.113.9/", "documentation"],
  ["http://[2001:db8::1]/", "documentation"],
  ["http://[3fff::1]/", "documentation"],
  ["http://198.18.0.1/", "benchmarking"],
  ["http://198.19.255.255/", "benchmarking"],
  ["http://[2001:2::1]/", "benchmarking"],
];

describe("classifyAddress", () => {
  it.each(REFUSED)("refuses %s as %s", (url, rule) => {
    expect(classifyAddress(hostOf(url))).toEqual({ allowed: false, rule });
  });

  it.each([
    "http://8.8.8.8/",
    "http://1.1.1.1/",
    "http://[2606:4700::1111]/",
    "http://[2001:4860:4860::8888]/",
    "http://[2001:4860:1::5efe:808:808]/", // ISATAP-shaped, but the embedded IPv4 is public
  ])("allows public unicast %s", (url) => {
    expect(classifyAddress(hostOf(url))).toEqual({ allowed: true });
  });

  it("lets loopback through only with the test option, and only loopback", () => {
    const options = { allowLoopback: true };
    expect(classifyAddress("127.0.0.1", options)).toEqual({ allowed: true });
    expect(classifyAddress("::1", options)).toEqual({ allowed: true });
    expect(classifyAddress("10.0.0.1", options)).toEqual({ allowed: false, rule: "private" });
    expect(classifyAddress("169.254.169.254", options)).toEqual({ allowed: false, rule: "metadata" });
    expect(classifyAddress("::ffff:127.0.0.1", options)).toEqual({ allowed: false, rule: "loopback" });
  });

  it("refuses text that is not an address", () => {
    expect(classifyAddress("example.com")).toEqual({ allowed: false, rule: "invalid" });
    expect(classifyAddress("")).toEqual({ allowed: false, rule: "invalid" });
  });
});
