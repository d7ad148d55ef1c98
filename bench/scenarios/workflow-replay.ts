/**
 * The workflow code's own cost per call, without the server: the histories of a short and a long
 * sequential run (Rewind and the plain baseline) are replayed with `Worker.runReplayHistory`,
 * and the difference gives CPU time per call. The two sides alternate round by round, so the
 * machine's slow moments fall on both. It also counts how often the SDK enters the
 * workflow's V8 context per call: every entry runs with the SDK's `isolateExecutionTimeout`, which
 * makes Node start a watchdog for it, so entries are what workflow activations cost most.
 */
import path from "node:path";
import vm from "node:vm";
import { Worker, bundleWorkflowCode } from "@temporalio/worker";
import { REPLAY_SINKS } from "../../src/worker/index.ts";
import { loadWorkflowBundle } from "../../src/worker/workflow-bundle.ts";
import type { BenchContext } from "../context.ts";
import { assertTotal, callsScript, plainRun, rewindRun } from "../drivers.ts";
import { fetchHistories } from "../history.ts";
import { median, since } from "../stats.ts";
import { BENCH_DIR, REPO_ROOT } from "../stack.ts";

export interface ReplaySystem {
  /** Marginal replay time of one more call, ms (CPU of the workflow code and the SDK around it). */
  msPerCall: number;
  /** Marginal entries into the workflow context per call. */
  vmEntriesPerCall: number;
  samples: { n: number; ms: number[]; vmEntries: number }[];
}

export interface ReplayResult {
  sizes: [number, number];
  rewind: ReplaySystem;
  plain: ReplaySystem;
  /** Cost of one `runInContext` with and without a timeout on this machine, µs. */
  vmEntryUs: { withTimeout: number; withoutTimeout: number };
}

const noop = (): void => undefined;
const QUIET = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

/** Counts `vm.Script#runInContext` calls while `work` runs, then restores the original. */
async function countingVmEntries<T>(work: () => Promise<T>): Promise<{ value: T; entries: number }> {
  const original = vm.Script.prototype.runInContext;
  let entries = 0;
  vm.Script.prototype.runInContext = function counted(this: vm.Script, ...args: Parameters<typeof original>) {
    entries++;
    return original.apply(this, args);
  };
  try {
    return { value: await work(), entries };
  } finally {
    vm.Script.prototype.runInContext = original;
  }
}

function vmEntryCost(): ReplayResult["vmEntryUs"] {
  const context = vm.createContext({ x: 0 }, { microtaskMode: "afterEvaluate" });
  const script = new vm.Script("x++");
  const time = (options: vm.RunningScriptOptions) => {
    const started = performance.now();
    for (let i = 0; i < 500; i++) script.runInContext(context, options);
    return (since(started) * 1000) / 500;
  };
  time({});
  return { withoutTimeout: time({}), withTimeout: time({ timeout: 5000 }) };
}

export async function measureWorkflowReplay(ctx: BenchContext): Promise<ReplayResult> {
  const { stack } = ctx;
  const { sizes, rounds } = ctx.sizes.replay;
  const rewindBundle = await loadWorkflowBundle(path.join(REPO_ROOT, ".rewind", "cache"));
  const plainBundle = await bundleWorkflowCode({
    workflowsPath: path.join(BENCH_DIR, "baseline", "workflows.ts"),
    logger: QUIET,
  });
  const systems = { rewind: [] as ReplaySystem["samples"], plain: [] as ReplaySystem["samples"] };
  for (const n of sizes) {
    const rewind = await rewindRun(stack, callsScript(), { n, width: 1 });
    assertTotal("Rewind run", rewind.result, n);
    const plain = await plainRun(stack, n, 1);
    assertTotal("plain workflow", plain.result, n);
    const replayed = [
      { system: "rewind", id: rewind.id, options: { workflowBundle: rewindBundle, sinks: REPLAY_SINKS } },
      { system: "plain", id: plain.id, options: { workflowBundle: plainBundle } },
    ] as const;
    const histories = await Promise.all(replayed.map(({ id }) => fetchHistories(stack.client, id)));
    const samples = replayed.map(() => ({ n, ms: [] as number[], vmEntries: 0 }));
    // The two sides alternate, each round in the other order, so a slow moment falls on both.
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) {
        const { id, options } = replayed[i]!;
        const sample = samples[i]!;
        const started = performance.now();
        const { entries } = await countingVmEntries(async () => {
          for (const history of histories[i]!) await Worker.runReplayHistory(options, history, id);
        });
        sample.ms.push(since(started));
        sample.vmEntries = entries;
      }
    }
    replayed.forEach(({ system }, i) => systems[system].push(samples[i]!));
  }
  const summarize = (samples: ReplaySystem["samples"]): ReplaySystem => {
    const [small, large] = samples;
    const calls = (large?.n ?? 0) - (small?.n ?? 0);
    return {
      msPerCall: (median(large?.ms ?? []) - median(small?.ms ?? [])) / calls,
      vmEntriesPerCall: ((large?.vmEntries ?? 0) - (small?.vmEntries ?? 0)) / calls,
      samples,
    };
  };
  const result: ReplayResult = {
    sizes,
    rewind: summarize(systems.rewind),
    plain: summarize(systems.plain),
    vmEntryUs: vmEntryCost(),
  };
  ctx.log(
    `workflow replay per call: Rewind ${result.rewind.msPerCall.toFixed(2)} ms / ${result.rewind.vmEntriesPerCall.toFixed(1)} VM entries, plain ${result.plain.msPerCall.toFixed(2)} ms / ${result.plain.vmEntriesPerCall.toFixed(1)} VM entries`,
  );
  return result;
}
