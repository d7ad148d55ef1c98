/**
 * Fault injection, bounded for CI: a dozen runs while the worker is SIGKILLed at least ten
 * times, the Temporal server restarts on its SQLite file, and the MCP server is down for
 * longer than a retry interval. Every promise must hold afterwards. `npm run soak` runs the
 * same driver for longer.
 */
import { describe, expect, inject, it } from "vitest";
import { runChaos } from "./chaos-driver.ts";

describe("chaos", () => {
  it("keeps every promise through worker kills, a server restart and an MCP outage", async () => {
    const report = await runChaos({
      cliPath: inject("temporalCliPath"), runs: 12, kills: 10, restartServer: true, mcpOutageMs: 3_000, deadlineMs: 240_000,
      log: (line) => process.stderr.write(`[chaos] ${line}\n`),
    });
    process.stderr.write(`[chaos] ${JSON.stringify(report)}\n`);
    expect(report.kills).toBeGreaterThanOrEqual(10);
    expect(report.serverRestarts).toBe(1);
    expect(report.mcpOutages).toBe(1);
    expect(report.wrongResults).toEqual([]);
    expect(report.completed).toBe(12);
    expect(report.effects).toBe(12 * 14);
    expect(report.duplicateEffects).toEqual([]);
    expect(report.atMostOnceRepeated).toEqual([]);
    expect(report.eventsDelivered).toBe(report.completed);
  }, 300_000);
});
