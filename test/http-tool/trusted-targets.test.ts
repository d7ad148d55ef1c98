/**
 * REWIND_TRUSTED_TARGETS: how config.ts reads it (names canonicalized the way URLs are, addresses
 * in any notation the URL parser accepts become ranges, anything else refused at start-up naming
 * the variable), and what the matcher then trusts. The policy is on exactly when keys are set.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { trustedTargetMatcher } from "../../src/http-tool/trusted-targets.ts";

const KEYS = { REWIND_API_KEYS: "tenant-key-0123456789:tenant" };
const outbound = (env: Record<string, string>) => loadConfig(env, "/tmp").outbound;

describe("REWIND_TRUSTED_TARGETS", () => {
  it("is off without API keys and on with them, trusting nothing by default", () => {
    expect(outbound({})).toEqual({ guarded: false, trusted: { hosts: [], cidrs: [] } });
    expect(outbound(KEYS)).toEqual({ guarded: true, trusted: { hosts: [], cidrs: [] } });
    expect(outbound({ ...KEYS, REWIND_TRUSTED_TARGETS: " , " }).trusted).toEqual({ hosts: [], cidrs: [] });
  });

  it("reads host names, wildcards, addresses and CIDRs", () => {
    const { trusted } = outbound({
      ...KEYS,
      REWIND_TRUSTED_TARGETS:
        "MCP.Internal., *.corp.example, 10.0.0.0/8, fd00::/8, ::1, [fe80::1], 127.1, 0x7f000002, 2130706435, 192.168.1.7",
    });
    expect(trusted.hosts).toEqual(["mcp.internal", "*.corp.example"]);
    expect(trusted.cidrs).toEqual([
      "10.0.0.0/8",
      "fd00::/8",
      "::1/128",
      "fe80::1/128",
      "127.0.0.1/32",
      "127.0.0.2/32",
      "127.0.0.3/32",
      "192.168.1.7/32",
    ]);
  });

  it.each([
    "mcp.internal:8080",
    "http://mcp.internal",
    "mcp.internal/path",
    "user@mcp.internal",
    "10.0.0.0/33",
    "::/129",
    "10.0.0.0/-1",
    "10.0.0.0/8/1",
    "*.10.0.0.1",
    "*",
    "*.",
    "bad host",
    "fe80::1%eth0",
    "a..b",
  ])("refuses %j at start-up, naming the variable", (entry) => {
    expect(() => outbound({ ...KEYS, REWIND_TRUSTED_TARGETS: entry })).toThrow(ConfigError);
    expect(() => outbound({ ...KEYS, REWIND_TRUSTED_TARGETS: entry })).toThrow(/REWIND_TRUSTED_TARGETS/);
  });

  it("matches names exactly or by subdomain, and addresses by range (IPv4-mapped ones too)", () => {
    const matcher = trustedTargetMatcher(
      outbound({ ...KEYS, REWIND_TRUSTED_TARGETS: "mcp.internal,*.corp.example,10.0.0.0/8,::1" }).trusted,
    );
    expect(matcher.trustsHost("mcp.internal")).toBe(true);
    expect(matcher.trustsHost("MCP.INTERNAL.")).toBe(true);
    expect(matcher.trustsHost("other.internal")).toBe(false);
    expect(matcher.trustsHost("a.corp.example")).toBe(true);
    expect(matcher.trustsHost("corp.example")).toBe(false);
    expect(matcher.trustsHost("evilcorp.example")).toBe(false);
    expect(matcher.trustsHost("10.0.0.1")).toBe(false); // addresses are trusted by range, not by name
    expect(matcher.trustsAddress("10.255.1.2")).toBe(true);
    expect(matcher.trustsAddress("::ffff:10.1.2.3")).toBe(true);
    expect(matcher.trustsAddress("11.0.0.1")).toBe(false);
    expect(matcher.trustsAddress("::1")).toBe(true);
    expect(matcher.trustsAddress("127.0.0.1")).toBe(false);
    expect(matcher.trustsAddress("not an address")).toBe(false);
  });
});
