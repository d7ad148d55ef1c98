/** How long an unused spare MCP session is kept: a default of 30 s, the setting (0 keeps none), and wrong values refused. */
import { describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_SPARE_SESSION_IDLE_MS, loadConfig } from "../../src/config.ts";

describe("REWIND_SPARE_SESSION_SECONDS", () => {
  it("defaults to 30 s and takes the seconds given, 0 included", () => {
    expect(DEFAULT_SPARE_SESSION_IDLE_MS).toBe(30_000);
    expect(loadConfig({}).spareSessionIdleMs).toBe(30_000);
    expect(loadConfig({ REWIND_SPARE_SESSION_SECONDS: "5" }).spareSessionIdleMs).toBe(5_000);
    expect(loadConfig({ REWIND_SPARE_SESSION_SECONDS: "0" }).spareSessionIdleMs).toBe(0);
  });

  it("refuses what is not a whole number of seconds from 0 to an hour", () => {
    for (const value of ["-1", "3601", "soon", "1.5"])
      expect(() => loadConfig({ REWIND_SPARE_SESSION_SECONDS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ REWIND_SPARE_SESSION_SECONDS: "soon" })).toThrow(/REWIND_SPARE_SESSION_SECONDS/);
  });
});
