/** How many calls a workflow task hands straight back to its worker: a default of a run's calls in flight, the setting, and wrong values refused. */
import { describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_EAGER_CALLS, loadConfig } from "../../src/config.ts";
import { RUN_CONCURRENCY } from "../../src/shared/index.ts";

describe("REWIND_EAGER_CALLS", () => {
  it("defaults to a run's calls in flight and takes the number given, 0 included", () => {
    expect(DEFAULT_EAGER_CALLS).toBe(RUN_CONCURRENCY);
    expect(loadConfig({}).eagerCalls).toBe(16);
    expect(loadConfig({ REWIND_EAGER_CALLS: "3" }).eagerCalls).toBe(3);
    expect(loadConfig({ REWIND_EAGER_CALLS: "0" }).eagerCalls).toBe(0);
  });

  it("refuses what is not a whole number from 0 to 1,000", () => {
    for (const value of ["-1", "1001", "many", "2.5"])
      expect(() => loadConfig({ REWIND_EAGER_CALLS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ REWIND_EAGER_CALLS: "-1" })).toThrow(/REWIND_EAGER_CALLS/);
  });
});
