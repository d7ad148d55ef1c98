/**
 * Which headers follow a redirect: all of them within one origin; across origins only the short
 * allow-list, so credential headers whose names no pattern could guess are dropped too.
 */
import { describe, expect, it } from "vitest";
import { nextHop } from "../../src/http-tool/redirects.ts";
import type { HopRequest } from "../../src/http-tool/request-check.ts";

const SCRIPT_HEADERS = {
  accept: "application/json",
  "accept-language": "fr",
  "user-agent": "script/1",
  "idempotency-key": "run_1/3",
  "accept-encoding": "gzip, br",
  "content-type": "application/json",
  authorization: "Bearer a",
  cookie: "s=1",
  "x-functions-key": "azure-functions-secret",
  "ocp-apim-subscription-key": "apim-secret",
  "x-goog-iap-jwt-assertion": "iap-jwt",
  "x-custom": "anything",
  traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
};

function hop(method: string, body?: string): HopRequest {
  return { url: new URL("https://api.example.com/start"), method, headers: { ...SCRIPT_HEADERS }, body };
}

describe("redirect headers", () => {
  it("keeps every header on a same-origin redirect", () => {
    const next = nextHop(hop("POST", "{}"), 307, "/elsewhere");
    expect(next?.url.href).toBe("https://api.example.com/elsewhere");
    expect(next?.headers).toEqual(SCRIPT_HEADERS);
  });

  it.each([307, 308])("keeps only the allow-list and content-type with the body on a cross-origin %i", (status) => {
    const next = nextHop(hop("POST", "{}"), status, "https://other.example.net/in");
    expect(next).toMatchObject({ method: "POST", body: "{}" });
    expect(next?.headers).toEqual({
      accept: "application/json",
      "accept-language": "fr",
      "user-agent": "script/1",
      "idempotency-key": "run_1/3",
      "accept-encoding": "gzip, br",
      "content-type": "application/json",
    });
  });

  it.each([
    [303, "POST"],
    [302, "POST"],
    [301, "POST"],
    [302, "GET"],
  ])("drops content-type with the body on a cross-origin %i after %s", (status, method) => {
    const next = nextHop(hop(method, method === "GET" ? undefined : "{}"), status, "https://other.example.net/in");
    expect(next).toMatchObject({ method: "GET", body: undefined });
    expect(Object.keys(next?.headers ?? {}).sort()).toEqual([
      "accept",
      "accept-encoding",
      "accept-language",
      "idempotency-key",
      "user-agent",
    ]);
  });

  it("drops the credential headers a name pattern missed, whatever their case was", () => {
    const next = nextHop(hop("GET"), 302, "http://api.example.com/start"); // another scheme is another origin
    for (const name of [
      "x-functions-key",
      "ocp-apim-subscription-key",
      "x-goog-iap-jwt-assertion",
      "authorization",
      "cookie",
      "x-custom",
      "traceparent",
    ]) {
      expect(next?.headers[name]).toBeUndefined();
    }
    expect(next?.headers["idempotency-key"]).toBe("run_1/3");
  });

  it("a port is part of the origin", () => {
    const next = nextHop(hop("GET"), 302, "https://api.example.com:8443/start");
    expect(next?.headers["x-functions-key"]).toBeUndefined();
  });
});
