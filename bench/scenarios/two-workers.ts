/**
 * Two workers: the overhead comparison (N `echo` calls, sequential and in 16 lanes, a Rewind run
 * against the plain Temporal workflow) while a second workers' process serves the same task
 * queues, so both Rewind and the plain baseline run on two workers. The one-worker figures are
 * the overhead scenario's. Each worker process's CPU over the rounds shows that both served.
 * Rounds alternate which goes first; one extra round warms both; the second process stops
 * afterwards, so later scenarios see one worker again.
 */
import type { BenchContext } from "../context.ts";
import { assertTotal, callsScript, plainRun, rewindRun } from "../drivers.ts";
import { cpuDelta, cpuSnapshot } from "../process-cpu.ts";
import { scaleSizes } from "../scale-sizes.ts";
import { median, p95 } from "../stats.ts";

type System = "plain" | "rewind";
type Steps = { cold: number; warm: number };

export interface TwoWorkersMode {
  width: number;
  n: number;
  samples: Record<System, number[]>;
  median: Record<System, number>;
  p95: Record<System, number>;
  perCall: Record<System, number>;
  rewindOverPlain: number;
  /** CPU ms each workers' process used over the measured rounds (first, second). */
  workerCpuMs: [number, number];
  /** Sandbox steps over the measured rounds, both processes: cold ones replay the script from its journal. */
  steps: { cold: number; warm: number; coldPerRun: number };
}

export interface TwoWorkersResult {
  workers: 2;
  sequential: TwoWorkersMode;
  parallel16: TwoWorkersMode;
}

export async function measureTwoWorkers(ctx: BenchContext): Promise<TwoWorkersResult> {
  const { stack } = ctx;
  const sizes = scaleSizes(ctx.sizes).twoWorkers;
  const second = await stack.addWorkers();
  ctx.log(`two workers: second workers' process pid ${second.pid}`);
  try {
    const script = callsScript();
    const measure = async (width: number, n: number, rounds: number): Promise<TwoWorkersMode> => {
      const samples: Record<System, number[]> = { plain: [], rewind: [] };
      const pids = { first: { workers: stack.workersPid }, second: { workers: second.pid } };
      let firstCpu = 0;
      let secondCpu = 0;
      const stepsNow = async () => {
        const both = await Promise.all([stack.workers.call<Steps>("steps"), second.workers.call<Steps>("steps")]);
        return { cold: both[0].cold + both[1].cold, warm: both[0].warm + both[1].warm };
      };
      let stepsBefore: Steps = { cold: 0, warm: 0 };
      for (let round = -1; round < rounds; round++) {
        if (round === 0) stepsBefore = await stepsNow();
        const before = { first: cpuSnapshot(pids.first), second: cpuSnapshot(pids.second) };
        for (const system of round % 2 === 0 ? (["rewind", "plain"] as const) : (["plain", "rewind"] as const)) {
          if (system === "plain") {
            const done = await plainRun(stack, n, width);
            assertTotal("plain workflow", done.result, n);
            if (round >= 0) samples.plain.push(done.ms);
          } else {
            const done = await rewindRun(stack, script, { n, width });
            assertTotal("Rewind run", done.result, n);
            if (round >= 0) samples.rewind.push(done.ms);
          }
        }
        if (round >= 0) {
          firstCpu += cpuDelta(before.first, cpuSnapshot(pids.first)).workers ?? Number.NaN;
          secondCpu += cpuDelta(before.second, cpuSnapshot(pids.second)).workers ?? Number.NaN;
        }
        ctx.log(
          `two workers, width ${width}, round ${round < 0 ? "warm-up" : `${round + 1}/${rounds}`}: plain ${samples.plain.at(-1)?.toFixed(0) ?? "-"} ms, Rewind ${samples.rewind.at(-1)?.toFixed(0) ?? "-"} ms`,
        );
      }
      const stepsAfter = await stepsNow();
      const cold = stepsAfter.cold - stepsBefore.cold;
      const warm = stepsAfter.warm - stepsBefore.warm;
      ctx.log(`two workers, width ${width}: ${cold} cold and ${warm} warm sandbox steps over ${rounds} Rewind runs`);
      const med = { plain: median(samples.plain), rewind: median(samples.rewind) };
      return {
        width,
        n,
        samples,
        median: med,
        p95: { plain: p95(samples.plain), rewind: p95(samples.rewind) },
        perCall: { plain: med.plain / n, rewind: med.rewind / n },
        rewindOverPlain: med.rewind / med.plain,
        workerCpuMs: [firstCpu, secondCpu],
        steps: { cold, warm, coldPerRun: cold / rounds },
      };
    };
    const sequential = await measure(1, sizes.n, sizes.rounds);
    const parallel16 = await measure(16, sizes.parallelN, sizes.parallelRounds);
    return { workers: 2, sequential, parallel16 };
  } finally {
    await second.stop();
  }
}
