/**
 * Pinning `policies["http.fetch"]`: the same settings as any tool's policy (heartbeats refused,
 * as for MCP tools), accepted only when the toolset enables http, and carried by a toolset
 * derived from one that has it. A toolset without the policy pins as it always did.
 */
import { describe, expect, it } from "vitest";
import type { PinnedToolset } from "../../src/shared/toolset.ts";
import { PolicyError, pinPolicies } from "../../src/toolsets/pin-policies.ts";
import { pinToolset } from "../../src/toolsets/pin-toolset.ts";
import { RegistrationError } from "../../src/toolsets/registration-error.ts";
import type { RegisterToolsetBody } from "../../src/contract/registration-request.ts";

const withHttp = {
  format: 1 as const,
  mcpServers: {},
  hostTools: {},
  workflows: {},
  http: { allowedHosts: ["api.example.com"] },
};
const withoutHttp = { format: 1 as const, mcpServers: {}, hostTools: {}, workflows: {} };
const deps = { listTools: async () => [], loadBase: async (): Promise<PinnedToolset | undefined> => undefined };

describe("pinPolicies and http.fetch", () => {
  it("pins approval, timeout, onInterruption and concurrency like any tool's", () => {
    expect(
      pinPolicies(withHttp, {
        "http.fetch": { approval: true, timeout: "20s", onInterruption: "retry", concurrency: 2 },
      }),
    ).toEqual({ "http.fetch": { approval: true, timeoutMs: 20_000, onInterruption: "retry", concurrency: 2 } });
    expect(pinPolicies(withHttp, { "http.fetch": { onInterruption: "at_most_once" } })).toEqual({
      "http.fetch": { onInterruption: "at_most_once" },
    });
  });

  it("refuses what it refuses other tools: heartbeats, bad durations", () => {
    expect(() => pinPolicies(withHttp, { "http.fetch": { heartbeatTimeout: "10s" } })).toThrow(
      /policies\["http.fetch"\].heartbeatTimeout: only host tools heartbeat/,
    );
    expect(() => pinPolicies(withHttp, { "http.fetch": { timeout: 500 } })).toThrow(/at least 1 second/);
    // The spec bounds a response to 30 seconds: a policy shortens the bound, never lengthens it.
    expect(pinPolicies(withHttp, { "http.fetch": { timeout: "30s" } })).toEqual({
      "http.fetch": { timeoutMs: 30_000 },
    });
    expect(() => pinPolicies(withHttp, { "http.fetch": { timeout: "31s" } })).toThrow(/bounded to 30 seconds/);
  });

  it("refuses it in a toolset without http, naming the field to set", () => {
    expect(() => pinPolicies(withoutHttp, { "http.fetch": { approval: true } })).toThrow(PolicyError);
    expect(() => pinPolicies(withoutHttp, { "http.fetch": { approval: true } })).toThrow(
      /policies\["http.fetch"\]: this toolset does not enable http \(give http.allowedHosts\)/,
    );
  });

  it("still refuses other names under http", () => {
    expect(() => pinPolicies(withHttp, { "http.get": { approval: true } })).toThrow(
      /"http.get" is not a tool of this toolset/,
    );
  });
});

describe("registering http.fetch policies", () => {
  it("is a 400 naming the field when the request has no http", async () => {
    const error = await pinToolset({ policies: { "http.fetch": { timeout: "5s" } } }, deps).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RegistrationError);
    expect(error).toMatchObject({
      status: 400,
      message: expect.stringMatching(/policies\["http.fetch"\].*http.allowedHosts/),
      details: { field: "policies" },
    });
  });

  it("pins the policy beside the allow-list, and nothing when none is given", async () => {
    const request: RegisterToolsetBody = {
      http: { allowedHosts: ["API.example.com"] },
      policies: { "http.fetch": { approval: true, concurrency: 1 } },
    };
    const { document } = await pinToolset(request, deps);
    expect(document).toEqual({ ...withHttp, policies: { "http.fetch": { approval: true, concurrency: 1 } } });
    expect((await pinToolset({ http: { allowedHosts: ["api.example.com"] } }, deps)).document).toEqual({
      ...withHttp,
      policies: {},
    });
  });

  it("is kept by a toolset derived from one that has it", async () => {
    const base = (
      await pinToolset(
        { http: { allowedHosts: ["api.example.com"] }, policies: { "http.fetch": { approval: true } } },
        deps,
      )
    ).document;
    const { document } = await pinToolset({ base: `ts_${"0".repeat(64)}` }, { ...deps, loadBase: async () => base });
    expect(document.policies).toEqual({ "http.fetch": { approval: true } });
    expect(document.http).toEqual(base.http);
  });
});
