/**
 * Throughput: many runs of ten sequential calls started at once through the API, all on the one
 * worker. Reports runs/s and calls/s from the first POST to the last completion, how long the
 * POSTs took under that load, and the worker process's memory (RSS before, peak, after) and its
 * peak count of warm isolates.
 */
import type { BenchContext } from "../context.ts";
import { assertTotal, callsScript, postRun } from "../drivers.ts";
import type { WorkerMemory } from "../stack.ts";
import { median, p95, since } from "../stats.ts";

export interface ThroughputRound {
  runs: number;
  callsPerRun: number;
  totalMs: number;
  submitMs: number;
  runsPerSec: number;
  callsPerSec: number;
  post: { medianMs: number; p95Ms: number };
  /** Per-run time from its POST to its completion. */
  runMs: { medianMs: number; p95Ms: number };
  worker: {
    rssBeforeMb: number;
    peakRssMb: number;
    rssAfterMb: number;
    peakWarmIsolates: number;
    heapUsedAfterMb: number;
  };
  benchRssMb: number;
}

const MB = 1024 * 1024;

export async function measureThroughput(ctx: BenchContext): Promise<ThroughputRound[]> {
  const { stack } = ctx;
  const { runs, calls, rounds } = ctx.sizes.throughput;
  const script = callsScript();
  const results: ThroughputRound[] = [];
  for (let round = 0; round < rounds; round++) {
    await stack.workers.call("resetPeak");
    const before = await stack.workers.call<WorkerMemory>("memory");
    let peakWarm = before.warmIsolates;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const memory = await stack.workers.call<WorkerMemory>("memory");
        peakWarm = Math.max(peakWarm, memory.warmIsolates);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    const started = performance.now();
    let submitted = 0;
    let submitMs = 0;
    const posts: number[] = [];
    const runTimes: number[] = [];
    await Promise.all(
      Array.from({ length: runs }, async () => {
        const posted = await postRun(stack, script, { n: calls, width: 1 });
        posts.push(posted.postMs);
        if (++submitted === runs) submitMs = since(started);
        const result = await stack.client.workflow.getHandle(posted.id).result();
        assertTotal("Rewind run", result, calls);
        runTimes.push(since(posted.started));
      }),
    );
    const totalMs = since(started);
    sampling = false;
    await sampler;
    const after = await stack.workers.call<WorkerMemory>("memory");
    const row: ThroughputRound = {
      runs,
      callsPerRun: calls,
      totalMs,
      submitMs,
      runsPerSec: runs / (totalMs / 1000),
      callsPerSec: (runs * calls) / (totalMs / 1000),
      post: { medianMs: median(posts), p95Ms: p95(posts) },
      runMs: { medianMs: median(runTimes), p95Ms: p95(runTimes) },
      worker: {
        rssBeforeMb: before.rss / MB,
        peakRssMb: after.peakRss / MB,
        rssAfterMb: after.rss / MB,
        peakWarmIsolates: peakWarm,
        heapUsedAfterMb: after.heapUsed / MB,
      },
      benchRssMb: process.memoryUsage().rss / MB,
    };
    results.push(row);
    ctx.log(
      `throughput round ${round + 1}/${rounds}: ${runs} runs in ${(totalMs / 1000).toFixed(1)} s = ${row.runsPerSec.toFixed(1)} runs/s, ${row.callsPerSec.toFixed(0)} calls/s, worker peak RSS ${row.worker.peakRssMb.toFixed(0)} MB`,
    );
  }
  return results;
}
