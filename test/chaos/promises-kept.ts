/**
 * What a chaos round must show, in one place for the dev-server rounds and the cluster round:
 * every fault it planned happened while a run was still going, and no promise broke (no run stuck
 * or unfinished, no wrong result, no effect twice, no at-most-once call repeated or lost, every
 * event delivered).
 */
import { expect } from "vitest";
import { NO_BROKEN_PROMISES, brokenPromises, type ChaosReport } from "./chaos-driver.ts";

export interface PlannedRound {
  runs: number;
  workers: number;
  kills: number;
}

export function expectEveryPromiseKept(report: ChaosReport, planned: PlannedRound): void {
  expect(report.kills).toBeGreaterThanOrEqual(planned.kills);
  expect(report.killsPerWorker.every((kills) => kills >= Math.floor(planned.kills / planned.workers))).toBe(true);
  expect(report.serverRestarts).toBe(1);
  expect(report.mcpOutages).toBe(1);
  // Every kill, the restart and the outage happened while a run was still going.
  expect(report.faults).toBe(report.kills + 2);
  expect(report.faultsOnOpenRuns).toBe(report.faults);
  expect(report.stuckRuns).toEqual([]);
  expect(report.unfinishedRuns).toEqual([]);
  expect(report.wrongResults).toEqual([]);
  expect(report.completed).toBe(planned.runs);
  expect(report.effects).toBe(report.effectsExpected);
  expect(report.duplicateEffects).toEqual([]);
  // A send whose outcome was unknown (a kill with it in flight) may never have reached the tool.
  expect(report.atMostOnceCalls).toBeGreaterThanOrEqual(report.atMostOnceSent);
  expect(report.atMostOnceLost).toEqual([]);
  expect(report.atMostOnceRepeated).toEqual([]);
  expect(report.eventsDelivered).toBe(report.completed);
  expect(brokenPromises(report)).toEqual(NO_BROKEN_PROMISES);
}
