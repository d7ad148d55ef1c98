/**
 * Policies are validated against the toolset's tools and pinned in milliseconds, without the
 * settings that state a default (so a toolset names the same id written either way); allowed
 * hosts are normalized so that two spellings of one list pin the same way.
 */
import { describe, expect, it } from "vitest";
import { AllowedHostError, normalizeAllowedHosts } from "../../src/toolsets/allowed-hosts.ts";
import { PolicyError, pinPolicies } from "../../src/toolsets/pin-policies.ts";

const toolset = {
  format: 1 as const,
  mcpServers: { github: { url: "http://127.0.0.1:1/mcp", tools: [{ name: "create_issue", inputSchema: {} }] } },
  hostTools: { harness: { taskQueue: "q", tools: [{ name: "ask_user", inputSchema: {} }] } },
  workflows: {},
};

describe("pinPolicies", () => {
  it("pins durations as milliseconds and keeps the settings given", () => {
    expect(
      pinPolicies(toolset, {
        "github.create_issue": { onInterruption: "at_most_once", timeout: "30s", concurrency: 4, approval: true },
        "harness.ask_user": { heartbeatTimeout: "2 minutes", timeout: 5000 },
      }),
    ).toEqual({
      "github.create_issue": { onInterruption: "at_most_once", timeoutMs: 30_000, concurrency: 4, approval: true },
      "harness.ask_user": { heartbeatTimeoutMs: 120_000, timeoutMs: 5000 },
    });
  });

  it("leaves out the settings that state a default, so that writing them changes nothing pinned", () => {
    const withHttp = { ...toolset, http: { allowedHosts: ["example.com"] } };
    expect(
      pinPolicies(withHttp, {
        "github.create_issue": { approval: false, onInterruption: "retry", concurrency: 16, timeout: "5 minutes" },
        "harness.ask_user": { timeout: "1 hour", onInterruption: "at_most_once", onUnknown: "fail" },
        "http.fetch": { onInterruption: "retry", approval: false },
      }),
    ).toEqual({
      "harness.ask_user": { onInterruption: "at_most_once" },
      // The http tool's default depends on the method: an explicit retry is a setting of its own.
      "http.fetch": { onInterruption: "retry" },
    });
    // Not defaults: kept.
    expect(
      pinPolicies(toolset, { "github.create_issue": { approval: true, concurrency: 15, timeout: "4 minutes" } }),
    ).toEqual({ "github.create_issue": { approval: true, concurrency: 15, timeoutMs: 240_000 } });
  });

  it("refuses unknown tools, bad durations and heartbeats on MCP tools, naming them", () => {
    expect(() => pinPolicies(toolset, { "github.delete_repo": { approval: true } })).toThrow(
      /"github.delete_repo" is not a tool/,
    );
    expect(() => pinPolicies(toolset, { "github.create_issue": { timeout: "soon" } })).toThrow(PolicyError);
    expect(() => pinPolicies(toolset, { "github.create_issue": { timeout: 10 } })).toThrow(/at least 1 second/);
    expect(() => pinPolicies(toolset, { "github.create_issue": { timeout: "3 days" } })).toThrow(/at most 24 hours/);
    expect(() => pinPolicies(toolset, { "github.create_issue": { heartbeatTimeout: "10s" } })).toThrow(
      /only host tools heartbeat/,
    );
  });
});

describe("normalizeAllowedHosts", () => {
  it("lower-cases, drops trailing dots, dedupes and sorts", () => {
    expect(normalizeAllowedHosts(["API.GitHub.com.", "*.Example.com", "api.github.com", "localhost:8080"])).toEqual([
      "*.example.com",
      "api.github.com",
      "localhost:8080",
    ]);
  });

  it("refuses what is not a host, a *.domain or host:port", () => {
    for (const bad of ["http://api.github.com", "*.com", "a..b", "api.github.com:99999", "exa mple.com", "*"]) {
      expect(() => normalizeAllowedHosts([bad]), bad).toThrow(AllowedHostError);
    }
  });
});
