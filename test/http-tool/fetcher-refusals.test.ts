/**
 * Refusals that must happen before any socket is opened, driven through the fetcher with an
 * injected resolver. No server exists here: the connect guard records every socket the process
 * tries to open (and stops any that is not loopback), and each test asserts there were none.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGuardedFetcher, HttpRefusal } from "../../src/http-tool/index.ts";
import { guardConnects, tableResolver, type ConnectGuard } from "../helpers/http-loopback.ts";

let guard: ConnectGuard;
beforeEach(() => {
  guard = guardConnects();
});
afterEach(() => {
  guard.restore();
  expect(guard.attempts).toEqual([]);
});

async function refusal(promise: Promise<unknown>): Promise<HttpRefusal> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HttpRefusal);
  return error as HttpRefusal;
}

describe("fetcher refusals before connect", () => {
  it("refuses a name that resolves to the metadata address", async () => {
    const dns = tableResolver({ "metadata.example.com": ["169.254.169.254"] });
    const fetch = createGuardedFetcher({ resolve: dns.resolve });
    const error = await refusal(
      fetch({ url: "http://metadata.example.com/latest/meta-data/" }, ["metadata.example.com"]),
    );
    expect(error.rule).toBe("address:metadata");
    expect(error.message).toContain("metadata.example.com");
    expect(dns.calls).toEqual(["metadata.example.com"]);
  });

  it.each([
    [["8.8.8.8", "10.0.0.1"], "address:private"],
    [["10.0.0.1", "8.8.8.8"], "address:private"],
    [["2606:4700::1111", "fd00:ec2::254"], "address:metadata"],
    [["8.8.8.8", "::ffff:127.0.0.1"], "address:loopback"],
  ])("refuses when any answer is refused: %j", async (answers, rule) => {
    const dns = tableResolver({ "mixed.example.com": answers });
    const fetch = createGuardedFetcher({ resolve: dns.resolve });
    expect((await refusal(fetch({ url: "https://mixed.example.com/" }, ["mixed.example.com"]))).rule).toBe(rule);
  });

  it("checks IP-literal URLs without resolving them", async () => {
    const dns = tableResolver({});
    const fetch = createGuardedFetcher({ resolve: dns.resolve });
    const v4 = await refusal(fetch({ url: "http://169.254.169.254/latest/" }, ["169.254.169.254"]));
    const v6 = await refusal(fetch({ url: "http://[::ffff:a9fe:a9fe]/" }, ["[::ffff:169.254.169.254]"]));
    const hex = await refusal(fetch({ url: "http://0x7f.1/" }, ["127.0.0.1"]));
    expect([v4.rule, v6.rule, hex.rule]).toEqual(["address:metadata", "address:metadata", "address:loopback"]);
    expect(dns.calls).toEqual([]);
  });

  it("refuses loopback unless the test option is set", async () => {
    const dns = tableResolver({ "test.local": ["127.0.0.1"] });
    const fetch = createGuardedFetcher({ resolve: dns.resolve });
    expect((await refusal(fetch({ url: "http://test.local/" }, ["test.local"]))).rule).toBe("address:loopback");
  });

  it("refuses hosts off the list without resolving them", async () => {
    const dns = tableResolver({ "evil.example.net": ["8.8.8.8"] });
    const fetch = createGuardedFetcher({ resolve: dns.resolve });
    const error = await refusal(fetch({ url: "https://evil.example.net/" }, ["api.github.com"]));
    expect(error.rule).toBe("notAllowed");
    expect(dns.calls).toEqual([]);
  });

  it("turns resolver failures and empty answers into dns refusals", async () => {
    const dns = tableResolver({ "empty.example.com": [] });
    const fetch = createGuardedFetcher({ resolve: dns.resolve });
    expect((await refusal(fetch({ url: "https://missing.example.com/" }, ["*.example.com"]))).rule).toBe("dns");
    expect((await refusal(fetch({ url: "https://empty.example.com/" }, ["*.example.com"]))).rule).toBe("dns");
  });

  it("lets the deadline cover DNS, and the caller's signal abort it", async () => {
    const hanging = () => new Promise<never>(() => undefined);
    const slow = createGuardedFetcher({ resolve: hanging, timeoutMs: 200 });
    expect((await refusal(slow({ url: "https://slow.example.com/" }, ["slow.example.com"]))).rule).toBe("timeout");
    const patient = createGuardedFetcher({ resolve: hanging });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const aborted = await refusal(
      patient({ url: "https://slow.example.com/" }, ["slow.example.com"], controller.signal),
    );
    expect(aborted.rule).toBe("aborted");
  });

  it("validates method, headers and body, without echoing header values", async () => {
    const fetch = createGuardedFetcher({ resolve: tableResolver({}).resolve });
    const url = "https://api.example.com/";
    const list = ["api.example.com"];
    expect((await refusal(fetch({ url, method: "TRACE" }, list))).rule).toBe("method");
    expect((await refusal(fetch({ url, method: "GET\r\nX: y" }, list))).rule).toBe("method");
    const injected = await refusal(fetch({ url, headers: { "x-token": "secret-value\r\nHost: evil" } }, list));
    expect(injected.rule).toBe("header");
    expect(injected.message).not.toContain("secret-value");
    expect((await refusal(fetch({ url, headers: { "bad name": "v" } }, list))).rule).toBe("header");
    expect((await refusal(fetch({ url, headers: { Accept: "a", accept: "b" } }, list))).rule).toBe("header");
    expect((await refusal(fetch({ url, body: "x" }, list))).rule).toBe("body");
    expect((await refusal(fetch({ url: "not a url" }, list))).rule).toBe("url");
  });
});
