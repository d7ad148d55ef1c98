/**
 * Scaling: Rewind runs of 10, 100, 1,000 and 5,000 sequential calls. Time per call must stay flat
 * as runs grow (warm isolates feed only the new completion; continue-as-new bounds history), so
 * this reports time per call at each size, the least-squares slope of total time over calls (the
 * marginal cost of one more call), and each run's history: executions, events and payload bytes
 * per call, and where a call's time goes between the server's timestamps.
 */
import type { BenchContext } from "../context.ts";
import { assertTotal, callsScript, rewindRun } from "../drivers.ts";
import { historyOf, type HistorySummary } from "../history.ts";
import { linearFit, median } from "../stats.ts";

export interface ScalingRow {
  n: number;
  samples: number[];
  medianMs: number;
  perCallMs: number;
  history: HistorySummary;
}

export interface ScalingResult {
  rows: ScalingRow[];
  /** Marginal ms per call: slope of median total time over n. */
  slopeMsPerCall: number;
  interceptMs: number;
  /** Time per call at the largest size over time per call at 100 calls. */
  growth: number;
}

export async function measureScaling(ctx: BenchContext): Promise<ScalingResult> {
  const script = callsScript();
  const rows: ScalingRow[] = [];
  for (const { n, rounds } of ctx.sizes.scaling) {
    const samples: number[] = [];
    let lastId = "";
    for (let round = 0; round < rounds; round++) {
      const done = await rewindRun(ctx.stack, script, { n, width: 1 });
      assertTotal("Rewind run", done.result, n);
      samples.push(done.ms);
      lastId = done.id;
      ctx.log(
        `scaling n=${n} round ${round + 1}/${rounds}: ${done.ms.toFixed(0)} ms (${(done.ms / n).toFixed(2)} ms/call)`,
      );
    }
    const medianMs = median(samples);
    rows.push({ n, samples, medianMs, perCallMs: medianMs / n, history: await historyOf(ctx.stack.client, lastId) });
  }
  const fit = linearFit(
    rows.map((r) => r.n),
    rows.map((r) => r.medianMs),
  );
  const at100 = rows.find((r) => r.n === 100) ?? rows[0];
  const largest = rows.at(-1);
  return {
    rows,
    slopeMsPerCall: fit.slope,
    interceptMs: fit.intercept,
    growth: at100 && largest ? largest.perCallMs / at100.perCallMs : Number.NaN,
  };
}
