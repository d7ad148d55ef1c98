/**
 * Fault injection, bounded for CI, with one worker process and with two on the same task queue:
 * a dozen runs (short ones, and long ones of 20–50 sequential calls then 16 in parallel) while
 * the workers are SIGKILLed six times in turn, the Temporal server restarts on its SQLite file,
 * and the MCP server is down for longer than a retry interval. Every fault must hit a run still
 * going, and every promise must hold afterwards: no run stuck or unfinished, right results,
 * effects once per key, no at-most-once call repeated, every event delivered. `npm run soak`
 * runs the same driver for longer, with ten kills a round and long runs of 30–100 calls.
 */
import { describe, expect, inject, it } from "vitest";
import { brokenPromises, runChaos } from "./chaos-driver.ts";

const RUNS = 12;
const LONG_RUNS = 5;
const KILLS = 6;

describe("chaos", () => {
  // The two rounds have their own Temporal server, workers and MCP server, and spend most of their
  // time waiting on faults: side by side, they take about the time of one.
  it.concurrent.each([1, 2])(
    "keeps every promise through worker kills, a server restart and an MCP outage (%i worker process(es))",
    async (workers) => {
      const report = await runChaos({
        temporal: { cliPath: inject("temporalCliPath") },
        runs: RUNS,
        longRuns: LONG_RUNS,
        workers,
        kills: KILLS,
        longRunCalls: { min: 20, max: 50 },
        restartServer: true,
        mcpOutageMs: 3_000,
        deadlineMs: 240_000,
        stuckAfterMs: 60_000,
        log: (line) => process.stderr.write(`[chaos ${workers}w] ${line}\n`),
      });
      process.stderr.write(`[chaos ${workers}w] ${JSON.stringify(report)}\n`);
      expect(report.kills).toBeGreaterThanOrEqual(KILLS);
      expect(report.killsPerWorker.every((kills) => kills >= Math.floor(KILLS / workers))).toBe(true);
      expect(report.serverRestarts).toBe(1);
      expect(report.mcpOutages).toBe(1);
      // Every kill, the restart and the outage happened while a run was still going.
      expect(report.faults).toBe(report.kills + 2);
      expect(report.faultsOnOpenRuns).toBe(report.faults);
      expect(report.stuckRuns).toEqual([]);
      expect(report.unfinishedRuns).toEqual([]);
      expect(report.wrongResults).toEqual([]);
      expect(report.completed).toBe(RUNS);
      expect(report.effects).toBe(report.effectsExpected);
      expect(report.duplicateEffects).toEqual([]);
      // A send whose outcome was unknown (a kill with it in flight) may never have reached the tool.
      expect(report.atMostOnceCalls).toBeGreaterThanOrEqual(report.atMostOnceSent);
      expect(report.atMostOnceCalls).toBeLessThanOrEqual(RUNS - LONG_RUNS);
      expect(report.atMostOnceLost).toEqual([]);
      expect(report.atMostOnceRepeated).toEqual([]);
      expect(report.eventsDelivered).toBe(report.completed);
      expect(brokenPromises(report)).toEqual({
        stuck: 0,
        unfinished: 0,
        wrongResults: 0,
        duplicateEffects: 0,
        atMostOnceRepeated: 0,
        atMostOnceLost: 0,
        eventsNotDelivered: 0,
        faultsOnNoOpenRun: 0,
      });
    },
    330_000,
  );
});
