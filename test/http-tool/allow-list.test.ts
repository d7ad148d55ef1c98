/**
 * The allow-list matcher: exact and wildcard hosts, ports, case and trailing dots, and the URL
 * shapes refused before any host comparison (schemes, userinfo, unlisted IP literals).
 */
import { describe, expect, it } from "vitest";
import { checkAllowList } from "../../src/http-tool/index.ts";

const LIST = ["api.github.com", "*.example.com", "internal.test:8443", "93.184.216.34"];

function verdict(url: string, list: string[] = LIST) {
  return checkAllowList(new URL(url), list);
}

describe("checkAllowList", () => {
  it.each([
    "https://api.github.com/repos",
    "http://api.github.com/",
    "https://API.GitHub.com./x",
    "https://a.example.com/",
    "https://deep.a.example.com/",
    "https://internal.test:8443/",
    "http://internal.test:8443/",
    "https://93.184.216.34/",
    "https://1572395042/", // the listed 93.184.216.34, as the URL parser reads a bare number
    "http://api.github.com:80/",
    "https://api.github.com:443/",
  ])("allows %s", (url) => {
    expect(verdict(url)).toEqual({ allowed: true });
  });

  it.each([
    ["https://example.com/", "notAllowed"], // a wildcard covers subdomains, not the apex
    ["https://evil-example.com/", "notAllowed"],
    ["https://api.github.com.evil.net/", "notAllowed"],
    ["https://github.com/", "notAllowed"],
    ["https://internal.test/", "port"],
    ["https://api.github.com:8443/", "port"],
    ["http://api.github.com:443/", "port"], // http only on 80 unless the entry names a port
    ["https://api.github.com:80/", "port"],
    ["https://93.184.216.35/", "notAllowed"],
    ["ftp://api.github.com/", "scheme"],
    ["file:///etc/passwd", "scheme"],
    ["data:text/plain,hi", "scheme"],
    ["javascript:alert(1)", "scheme"],
    ["ws://api.github.com/", "scheme"],
    ["https://user:pass@api.github.com/", "userinfo"],
    ["https://user@api.github.com/", "userinfo"],
    ["https://:pass@api.github.com/", "userinfo"],
  ])("refuses %s (%s)", (url, rule) => {
    expect(verdict(url)).toEqual({ allowed: false, rule });
  });

  it("matches IP literals only exactly, never through a wildcard", () => {
    expect(verdict("http://10.0.0.1/", ["*.0.0.1"])).toEqual({ allowed: false, rule: "notAllowed" });
    expect(verdict("http://[::1]/", ["[::1]"])).toEqual({ allowed: true });
    expect(verdict("http://[0:0::1]:8080/", ["[::1]:8080"])).toEqual({ allowed: true });
  });

  it("ignores entries that do not parse", () => {
    expect(verdict("https://api.github.com/", ["", "exa mple.com", "api.github.com"])).toEqual({ allowed: true });
  });
});
