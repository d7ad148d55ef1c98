/**
 * Throughput: many runs of ten sequential `echo` calls started at once, all on one worker, made
 * side by side by Rewind (runs started through the API) and by the plain Temporal workflow (one
 * plain activity per call, started with the Temporal client) under the same load; rounds rotate
 * which goes first. Then the same pair as `npm start` runs it: Rewind's runs posted to an API
 * beside the worker (started eagerly, their first step carried in their input), plain workflows
 * started eagerly on the worker's connection. Reports runs/s and calls/s of each from the first
 * start to the last completion, Rewind's over plain's, how long the starts took under that load,
 * and the workers' process memory (RSS before, peak, after) and peak count of warm isolates. Then
 * a completion check: a larger batch of concurrent Rewind runs, all of which must complete.
 */
import { randomUUID } from "node:crypto";
import type { BenchContext } from "../context.ts";
import { assertTotal, callsScript, postRun } from "../drivers.ts";
import type { BenchStack, WorkerMemory } from "../stack.ts";
import { cpuDelta, cpuSnapshot, type CpuSnapshot } from "../process-cpu.ts";
import { median, p95, since } from "../stats.ts";

export interface ThroughputSide {
  totalMs: number;
  /** First start until every start was answered. */
  submitMs: number;
  runsPerSec: number;
  callsPerSec: number;
  /** Time to start one run (Rewind: POST /v1/runs; plain: the client's start). */
  start: { medianMs: number; p95Ms: number };
  /** Per-run time from its start to its completion. */
  runMs: { medianMs: number; p95Ms: number };
  /** Runs that failed or returned a wrong total. */
  failed: number;
  worker: WorkerFigures;
  /** CPU time per run of each process of the stack, ms (Linux /proc). */
  cpuPerRun: CpuSnapshot;
  /** Sandbox steps per run (Rewind only; zero for plain): cold ones replayed the script from its journal. */
  stepsPerRun: { cold: number; warm: number };
}

export interface WorkerFigures {
  rssBeforeMb: number;
  peakRssMb: number;
  rssAfterMb: number;
  peakWarmIsolates: number;
  heapUsedAfterMb: number;
}

export interface ThroughputRound {
  runs: number;
  callsPerRun: number;
  rewind: ThroughputSide;
  plain: ThroughputSide;
  /** Rewind's runs/s over plain's. */
  ratio: number;
  /** The same pair as `npm start` runs it: API beside the worker, both started eagerly. */
  beside?: { rewind: ThroughputSide; plain: ThroughputSide; ratio: number };
}

export interface CompletionCheck {
  runs: number;
  callsPerRun: number;
  completed: number;
  failed: number;
  totalMs: number;
  runsPerSec: number;
  firstError?: string;
  worker: WorkerFigures;
}

export interface ThroughputResult {
  rounds: ThroughputRound[];
  /** Median over rounds of Rewind's runs/s over plain's. */
  ratio: number;
  completion?: CompletionCheck;
}

const MB = 1024 * 1024;
/** `rewindBeside`: posted to the API beside the worker; `plainEager`: started eagerly on the worker's connection. */
type System = "rewind" | "plain" | "rewindBeside" | "plainEager";

/** Samples the workers' memory every 250 ms until stopped; answers the figures over that time. */
async function watchWorker<T>(stack: BenchStack, work: () => Promise<T>): Promise<{ value: T; worker: WorkerFigures }> {
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
  let value: T;
  try {
    value = await work();
  } finally {
    sampling = false;
    await sampler;
  }
  const after = await stack.workers.call<WorkerMemory>("memory");
  return {
    value,
    worker: {
      rssBeforeMb: before.rss / MB,
      peakRssMb: after.peakRss / MB,
      rssAfterMb: after.rss / MB,
      peakWarmIsolates: Math.max(peakWarm, after.warmIsolates),
      heapUsedAfterMb: after.heapUsed / MB,
    },
  };
}

/** Starts one run of `calls` sequential calls; answers its start time and waits for its result. */
async function oneRun(
  stack: BenchStack,
  system: System,
  calls: number,
  script: string,
  besideUrl: string | undefined,
): Promise<{ startMs: number; result: Promise<unknown>; started: number }> {
  if (system === "rewind" || system === "rewindBeside") {
    const posted = await postRun(stack, script, { n: calls, width: 1 }, stack.toolsetId, besideUrl ?? stack.api.url);
    return {
      startMs: posted.postMs,
      started: posted.started,
      result: stack.client.workflow.getHandle(posted.id).result(),
    };
  }
  const started = performance.now();
  if (system === "plainEager") {
    const id = `plain_${randomUUID()}`;
    await stack.workers.call("startPlainEager", { id, url: stack.mcpUrl, n: calls });
    return { startMs: since(started), started, result: stack.plainClient.workflow.getHandle(id).result() };
  }
  const handle = await stack.plainClient.workflow.start("plainCalls", {
    taskQueue: stack.plainTaskQueue,
    workflowId: `plain_${randomUUID()}`,
    args: [{ url: stack.mcpUrl, n: calls, width: 1 }],
  });
  return { startMs: since(started), started, result: handle.result() };
}

interface Batch {
  totalMs: number;
  submitMs: number;
  starts: number[];
  runTimes: number[];
  failed: number;
  firstError?: string;
}

/** `runs` concurrent runs of one system; counts the failures instead of stopping at the first. */
async function batch(
  stack: BenchStack,
  system: System,
  runs: number,
  calls: number,
  besideUrl?: string,
): Promise<Batch> {
  const script = callsScript();
  const started = performance.now();
  let submitted = 0;
  let submitMs = 0;
  let failed = 0;
  let firstError: string | undefined;
  const starts: number[] = [];
  const runTimes: number[] = [];
  await Promise.all(
    Array.from({ length: runs }, async () => {
      try {
        const run = await oneRun(stack, system, calls, script, besideUrl);
        starts.push(run.startMs);
        if (++submitted === runs) submitMs = since(started);
        assertTotal(`${system} run`, await run.result, calls);
        runTimes.push(since(run.started));
      } catch (error) {
        failed++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }),
  );
  return { totalMs: since(started), submitMs, starts, runTimes, failed, ...(firstError ? { firstError } : {}) };
}

type Steps = { cold: number; warm: number };

async function side(
  ctx: BenchContext,
  system: System,
  runs: number,
  calls: number,
  besideUrl?: string,
): Promise<ThroughputSide> {
  const stepsBefore = await ctx.stack.workers.call<Steps>("steps");
  const cpuBefore = cpuSnapshot(ctx.stack.pids);
  const { value: done, worker } = await watchWorker(ctx.stack, () => batch(ctx.stack, system, runs, calls, besideUrl));
  const cpu = cpuDelta(cpuBefore, cpuSnapshot(ctx.stack.pids));
  const stepsAfter = await ctx.stack.workers.call<Steps>("steps");
  if (done.failed > 0) throw new Error(`${done.failed} of ${runs} ${system} runs failed: ${done.firstError ?? ""}`);
  const figures: ThroughputSide = {
    totalMs: done.totalMs,
    submitMs: done.submitMs,
    runsPerSec: runs / (done.totalMs / 1000),
    callsPerSec: (runs * calls) / (done.totalMs / 1000),
    start: { medianMs: median(done.starts), p95Ms: p95(done.starts) },
    runMs: { medianMs: median(done.runTimes), p95Ms: p95(done.runTimes) },
    failed: done.failed,
    worker,
    cpuPerRun: Object.fromEntries(Object.entries(cpu).map(([name, ms]) => [name, ms / runs])) as CpuSnapshot,
    stepsPerRun: {
      cold: (stepsAfter.cold - stepsBefore.cold) / runs,
      warm: (stepsAfter.warm - stepsBefore.warm) / runs,
    },
  };
  ctx.log(
    `throughput ${system}: ${runs} runs in ${(done.totalMs / 1000).toFixed(1)} s = ${figures.runsPerSec.toFixed(1)} runs/s, worker peak RSS ${worker.peakRssMb.toFixed(0)} MB, CPU per run ${JSON.stringify(figures.cpuPerRun)} ms, steps per run ${JSON.stringify(figures.stepsPerRun)}`,
  );
  return figures;
}

/**
 * One side of each system under the same load, in the round's order (rounds rotate which goes
 * first); Rewind's runs/s over plain's.
 */
async function pair(
  ctx: BenchContext,
  round: number,
  plainSystem: System,
  rewindSystem: System,
  besideUrl?: string,
): Promise<{ rewind: ThroughputSide; plain: ThroughputSide; ratio: number }> {
  const { runs, calls } = ctx.sizes.throughput;
  const order = round % 2 === 0 ? [plainSystem, rewindSystem] : [rewindSystem, plainSystem];
  const sides = new Map<System, ThroughputSide>();
  for (const system of order) sides.set(system, await side(ctx, system, runs, calls, besideUrl));
  const rewind = sides.get(rewindSystem);
  const plain = sides.get(plainSystem);
  if (!rewind || !plain) throw new Error(`a throughput side is missing (${rewindSystem}, ${plainSystem})`);
  return { rewind, plain, ratio: rewind.runsPerSec / plain.runsPerSec };
}

export async function measureThroughput(ctx: BenchContext): Promise<ThroughputResult> {
  const { runs, calls, rounds, completionRuns, beside } = ctx.sizes.throughput;
  const besideUrl = beside ? (await ctx.stack.workers.call<{ url: string }>("startEagerApi")).url : undefined;
  const results: ThroughputRound[] = [];
  for (let round = 0; round < rounds; round++) {
    const measured: ThroughputRound = { runs, callsPerRun: calls, ...(await pair(ctx, round, "plain", "rewind")) };
    if (besideUrl) {
      measured.beside = await pair(ctx, round, "plainEager", "rewindBeside", besideUrl);
      ctx.log(`throughput beside the API (npm start): Rewind / plain runs/s ${measured.beside.ratio.toFixed(2)}×`);
    }
    results.push(measured);
  }
  const result: ThroughputResult = { rounds: results, ratio: median(results.map((r) => r.ratio)) };
  ctx.log(`throughput: Rewind / plain runs/s ${result.ratio.toFixed(2)}×`);
  if (completionRuns > 0) {
    const { value: done, worker } = await watchWorker(ctx.stack, () =>
      batch(ctx.stack, "rewind", completionRuns, calls),
    );
    result.completion = {
      runs: completionRuns,
      callsPerRun: calls,
      completed: completionRuns - done.failed,
      failed: done.failed,
      totalMs: done.totalMs,
      runsPerSec: completionRuns / (done.totalMs / 1000),
      ...(done.firstError ? { firstError: done.firstError } : {}),
      worker,
    };
    ctx.log(
      `throughput completion check: ${result.completion.completed}/${completionRuns} concurrent runs completed in ${(done.totalMs / 1000).toFixed(1)} s, worker peak RSS ${worker.peakRssMb.toFixed(0)} MB`,
    );
  }
  return result;
}
