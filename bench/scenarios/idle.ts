/**
 * Idle runs: N runs that each make one `echo` call and then sleep on a durable timer until one
 * shared moment, all on one worker. While they all sleep — from a pause after the last call, for
 * the heap the start's burst grew to be given back, until the wake-up — it samples the workers'
 * process: RSS, heap, and how many warm isolates the Rewind worker still holds (a sleeping run
 * should hold none). Then it waits for every run to wake and complete, and reports the peak RSS
 * over the whole scenario and how long the wake-up took. Every run sleeps at least a second, so
 * each one has been parked on a timer even when starting the batch took longer than planned.
 */
import type { BenchContext } from "../context.ts";
import { postRun } from "../drivers.ts";
import type { WorkerMemory } from "../stack.ts";
import { median, since } from "../stats.ts";

export interface IdleResult {
  runs: number;
  /** The planned sleep, from the first POST to the shared wake-up moment, s. */
  sleepSec: number;
  /** First POST until every POST was answered, ms. */
  submitMs: number;
  /** First POST until every run's call had reached the MCP server, ms (NaN if some never did before the wake-up). */
  allCalledMs: number;
  /** Whether every run was asleep (its call made, plus a settling pause) before the wake-up. */
  allSleepingBeforeWake: boolean;
  /** Samples taken while every run slept (empty when they did not all sleep before the wake-up). */
  sleeping: { rssMb: number; heapUsedMb: number; heapTotalMb: number; externalMb: number; warmIsolates: number }[];
  /** Largest RSS while they all slept (sampled from a settling pause after the last call until the wake-up), MB. */
  sleepingRssMb: number;
  /** Median RSS of those samples: what the sleeping runs hold once the start's garbage is given back, MB. */
  sleepingRssMedianMb: number;
  /** Warm isolates held in the last sample while they all slept. */
  sleepingWarmIsolates: number;
  /** Peak RSS of the workers' process over the whole scenario (start, sleep, wake-up), MB. */
  peakRssMb: number;
  rssBeforeMb: number;
  completed: number;
  /** Runs still running when the wait for them ended (the wake-up took longer than the wait). */
  stillRunning: number;
  /** Runs that closed other than completed (failed, timed out, terminated). */
  failed: number;
  /** The wake-up moment until the last run completed, ms. */
  wakeToAllDoneMs: number;
  /** Median POST /v1/runs time under this load, ms. */
  postMedianMs: number;
}

const MB = 1024 * 1024;
/** After the last run's call reached the server: time for its completion to be fed and its timer started. */
const SETTLE_MS = 3_000;
/** Before sampling memory while they sleep: time for the heap the start burst grew to be given back. */
const SLEEP_SETTLE_MS = 60_000;
const SAMPLE_EVERY_MS = 10_000;

const SCRIPT = `import { svc, sleep } from "rewind:tools";

export default async function main(input: { i: number; wakeAt: number }) {
  const { i } = await svc.echo({ i: input.i });
  await sleep(Math.max(1000, Math.round(input.wakeAt - Date.now())));
  return i;
}
`;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function measureIdle(ctx: BenchContext): Promise<IdleResult> {
  const { stack } = ctx;
  const { runs, sleepSec, postConcurrency } = ctx.sizes.idle;
  await stack.workers.call("resetPeak");
  const before = await stack.workers.call<WorkerMemory>("memory");
  const started = performance.now();
  // Temporal stamps each run's StartTime after its POST left: the runs of this scenario alone.
  const startedAtEpoch = Date.now();
  const wakeAt = Date.now() + sleepSec * 1000;
  const wakeAtPerf = started + sleepSec * 1000;

  // Start the runs, a bounded number of POSTs in flight.
  const ids: string[] = [];
  const posts: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(postConcurrency, runs) }, async () => {
      while (next < runs) {
        const i = next++;
        const posted = await postRun(stack, SCRIPT, { i, wakeAt });
        ids.push(posted.id);
        posts.push(posted.postMs);
      }
    }),
  );
  const submitMs = since(started);
  ctx.log(`idle: ${runs} runs started in ${(submitMs / 1000).toFixed(1)} s`);
  // Wait until every run's call has reached the MCP server, then let their timers start.
  let allCalledMs = Number.NaN;
  while (performance.now() < wakeAtPerf - SETTLE_MS) {
    const arrivals = await stack.mcp.call<Record<string, number | null>>("firstArrivals", ids);
    const missing = ids.filter((id) => typeof arrivals[id] !== "number").length;
    if (missing === 0) {
      allCalledMs = since(started);
      break;
    }
    await pause(1_000);
  }
  const sleeping: IdleResult["sleeping"] = [];
  const allSleepingBeforeWake = Number.isFinite(allCalledMs);
  if (allSleepingBeforeWake) {
    // Memory while they sleep, not the start's high-water mark: the heap the start burst grew
    // is given back once allocation stops, so sampling begins after a settling pause (as long
    // as the sleep leaves room for it) and goes on every few seconds until the wake-up.
    const settle = Math.min(SLEEP_SETTLE_MS, Math.max(SETTLE_MS, (wakeAtPerf - performance.now()) / 3));
    ctx.log(
      `idle: every run made its call ${(allCalledMs / 1000).toFixed(1)} s after the first POST; sampling from ${(settle / 1000).toFixed(0)} s on`,
    );
    await pause(settle);
    const every = Math.max(1_000, Math.min(SAMPLE_EVERY_MS, (wakeAtPerf - performance.now()) / 6));
    while (performance.now() < wakeAtPerf - 1_000) {
      const memory = await stack.workers.call<WorkerMemory>("memory");
      sleeping.push({
        rssMb: memory.rss / MB,
        heapUsedMb: memory.heapUsed / MB,
        heapTotalMb: memory.heapTotal / MB,
        externalMb: memory.external / MB,
        warmIsolates: memory.warmIsolates,
      });
      await pause(Math.min(every, Math.max(0, wakeAtPerf - 1_000 - performance.now())));
    }
  } else ctx.log(`idle: not every run had made its call before the wake-up; raise the sleep`);

  // Wait for every run to close, counting with Temporal's visibility rather than holding
  // thousands of long polls open.
  const query = (status: string) =>
    `TaskQueue = "${stack.config.temporal.taskQueue}" AND StartTime >= "${new Date(startedAtEpoch).toISOString()}" AND ExecutionStatus = "${status}"`;
  await pause(Math.max(0, wakeAtPerf - performance.now()));
  let running = runs;
  const deadline = performance.now() + Math.max(60_000, runs * 100);
  while (performance.now() < deadline) {
    running = Number((await stack.client.workflow.count(query("Running"))).count);
    if (running === 0) break;
    await pause(500);
  }
  const wakeToAllDoneMs = performance.now() - wakeAtPerf;
  const completed = Number((await stack.client.workflow.count(query("Completed"))).count);
  // Visibility answers each count a moment apart: a run closing in between is not counted twice.
  const failed = Math.max(0, runs - completed - running);
  const after = await stack.workers.call<WorkerMemory>("memory");
  const result: IdleResult = {
    runs,
    sleepSec,
    submitMs,
    allCalledMs,
    allSleepingBeforeWake: allSleepingBeforeWake && sleeping.length > 0,
    sleeping,
    sleepingRssMb: sleeping.length > 0 ? Math.max(...sleeping.map((s) => s.rssMb)) : Number.NaN,
    sleepingRssMedianMb: sleeping.length > 0 ? median(sleeping.map((s) => s.rssMb)) : Number.NaN,
    sleepingWarmIsolates: sleeping.at(-1)?.warmIsolates ?? Number.NaN,
    peakRssMb: after.peakRss / MB,
    rssBeforeMb: before.rss / MB,
    completed,
    stillRunning: running,
    failed,
    wakeToAllDoneMs,
    postMedianMs: median(posts),
  };
  ctx.log(
    `idle: ${completed}/${runs} completed (${running} still running, ${failed} closed otherwise), ${(result.wakeToAllDoneMs / 1000).toFixed(1)} s after the wake-up; RSS while sleeping ${result.sleepingRssMb.toFixed(0)} MB, peak ${result.peakRssMb.toFixed(0)} MB, warm isolates while sleeping ${result.sleepingWarmIsolates}`,
  );
  return result;
}
