/**
 * Overhead: the same N echo calls, sequential and in 16 lanes, made (1) directly with the MCP
 * client, (2) by a plain Temporal workflow with one activity per call, (3) by a Rewind run
 * started through the API; and, as Temporal's floor, the plain workflow with no-op activities. Rounds rotate the order so drift hits all three alike; one extra
 * round first warms everything. Every measured run is read back for events per call and where
 * the time went (medians over the runs).
 */
import type { BenchContext } from "../context.ts";
import { assertTotal, callsScript, directCalls, plainRun, rewindRun } from "../drivers.ts";
import { medianHistoryOf, type HistorySummary } from "../history.ts";
import { addCpu, cpuDelta, cpuSnapshot, type CpuSnapshot } from "../process-cpu.ts";
import { median, p95 } from "../stats.ts";

type System = "direct" | "floor" | "plain" | "rewind";

export interface OverheadMode {
  mode: "sequential" | "parallel16";
  width: number;
  n: number;
  samples: Record<System, number[]>;
  median: Record<System, number>;
  p95: Record<System, number>;
  perCall: Record<System, number>;
  rewindOverPlain: number;
  rewindOverDirect: number;
  plainOverDirect: number;
  /** Median time of POST /v1/runs itself (type-check, start). */
  rewindPostMs: number;
  history: { rewind: HistorySummary; plain: HistorySummary; floor: HistorySummary };
  /** CPU ms per call by process, over the measured rounds. */
  cpuPerCall: Record<System, CpuSnapshot>;
}

function perCall(used: CpuSnapshot, calls: number): CpuSnapshot {
  return Object.fromEntries(Object.entries(used).map(([name, ms]) => [name, ms / calls]));
}

export async function measureOverhead(ctx: BenchContext): Promise<OverheadMode[]> {
  const { stack } = ctx;
  const { n } = ctx.sizes.overhead;
  const script = callsScript();
  const modes: OverheadMode[] = [];
  for (const [mode, width] of [
    ["sequential", 1],
    ["parallel16", 16],
  ] as const) {
    const rounds = width === 1 ? ctx.sizes.overhead.rounds : ctx.sizes.overhead.parallelRounds;
    const samples: Record<System, number[]> = { direct: [], floor: [], plain: [], rewind: [] };
    const posts: number[] = [];
    const cpu: Record<System, CpuSnapshot> = { direct: {}, floor: {}, plain: {}, rewind: {} };
    /** The workflow ids of each system's runs in the measured rounds, read back afterwards. */
    const runIds: Record<"floor" | "plain" | "rewind", string[]> = { floor: [], plain: [], rewind: [] };
    let measuring = false;
    const once: Record<System, () => Promise<number>> = {
      direct: async () => {
        const done = await directCalls(stack, n, width);
        assertTotal("direct calls", done.result, n);
        return done.ms;
      },
      floor: async () => {
        const done = await plainRun(stack, n, width, true);
        assertTotal("no-op workflow", done.result, n);
        if (measuring) runIds.floor.push(done.id);
        return done.ms;
      },
      plain: async () => {
        const done = await plainRun(stack, n, width);
        assertTotal("plain workflow", done.result, n);
        if (measuring) runIds.plain.push(done.id);
        return done.ms;
      },
      rewind: async () => {
        const done = await rewindRun(stack, script, { n, width });
        assertTotal("Rewind run", done.result, n);
        if (measuring) runIds.rewind.push(done.id);
        posts.push(done.postMs);
        return done.ms;
      },
    };
    const order: System[] = ["direct", "floor", "plain", "rewind"];
    for (let round = -1; round < rounds; round++) {
      measuring = round >= 0;
      const rotated = order.map((_, i) => order[(i + Math.max(round, 0)) % order.length] as System);
      for (const system of rotated) {
        const before = cpuSnapshot(stack.pids);
        const ms = await once[system]();
        if (round >= 0) {
          samples[system].push(ms);
          addCpu(cpu[system], cpuDelta(before, cpuSnapshot(stack.pids)));
        }
      }
      if (round < 0) posts.length = 0;
      ctx.log(
        `overhead ${mode} round ${round < 0 ? "warm-up" : round + 1}/${rounds}: direct ${samples.direct.at(-1)?.toFixed(0) ?? "-"} ms, no-op ${samples.floor.at(-1)?.toFixed(0) ?? "-"} ms, plain ${samples.plain.at(-1)?.toFixed(0) ?? "-"} ms, Rewind ${samples.rewind.at(-1)?.toFixed(0) ?? "-"} ms`,
      );
    }
    const med = {
      direct: median(samples.direct),
      floor: median(samples.floor),
      plain: median(samples.plain),
      rewind: median(samples.rewind),
    };
    modes.push({
      mode,
      width,
      n,
      samples,
      median: med,
      p95: {
        direct: p95(samples.direct),
        floor: p95(samples.floor),
        plain: p95(samples.plain),
        rewind: p95(samples.rewind),
      },
      perCall: { direct: med.direct / n, floor: med.floor / n, plain: med.plain / n, rewind: med.rewind / n },
      rewindOverPlain: med.rewind / med.plain,
      rewindOverDirect: med.rewind / med.direct,
      plainOverDirect: med.plain / med.direct,
      rewindPostMs: median(posts),
      cpuPerCall: Object.fromEntries(
        Object.entries(cpu).map(([system, used]) => [system, perCall(used, n * rounds)]),
      ) as Record<System, CpuSnapshot>,
      history: {
        rewind: await medianHistoryOf(stack.client, runIds.rewind),
        plain: await medianHistoryOf(stack.client, runIds.plain),
        floor: await medianHistoryOf(stack.client, runIds.floor),
      },
    });
  }
  return modes;
}
