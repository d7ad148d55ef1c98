/** How many runs a worker keeps in Temporal's sticky cache: a default that fits sleeping runs in memory, the setting, and wrong values refused. */
import { describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_MAX_CACHED_WORKFLOWS, loadConfig } from "../../src/config.ts";

describe("REWIND_MAX_CACHED_WORKFLOWS", () => {
  it("defaults to 500 runs and takes the number given", () => {
    expect(DEFAULT_MAX_CACHED_WORKFLOWS).toBe(500);
    expect(loadConfig({}).maxCachedWorkflows).toBe(500);
    expect(loadConfig({ REWIND_MAX_CACHED_WORKFLOWS: "2000" }).maxCachedWorkflows).toBe(2000);
  });

  it("refuses zero and what is not a whole number", () => {
    for (const value of ["0", "-5", "ten", "1.5"])
      expect(() => loadConfig({ REWIND_MAX_CACHED_WORKFLOWS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ REWIND_MAX_CACHED_WORKFLOWS: "0" })).toThrow(/REWIND_MAX_CACHED_WORKFLOWS/);
  });
});
