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
import { runChaos } from "./chaos-driver.ts";
import { expectEveryPromiseKept } from "./promises-kept.ts";

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
      expectEveryPromiseKept(report, { runs: RUNS, workers, kills: KILLS });
      expect(report.atMostOnceCalls).toBeLessThanOrEqual(RUNS - LONG_RUNS);
    },
    330_000,
  );
});
