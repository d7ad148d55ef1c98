/**
 * Sandbox time per step, measured directly on `createSandbox` (no Temporal): warm = feeding one
 * new completion to the run's warm session, step after step of a long run (and whether step
 * 5,000 costs what step 10 does); cold = a fresh sandbox replaying a journal of N completions,
 * which is what a step pays when the warm isolate is gone (worker restart, cache eviction);
 * first step = a new run's first step, in an isolate built for it or taken from the pool.
 */
import { stripTypeScriptTypes } from "node:module";
import ivm from "isolated-vm";
import { createSandbox } from "../../src/sandbox/index.ts";
import { validateAgainstSchema } from "../../src/schemas/index.ts";
import type { EventBatch } from "../../src/shared/journal.ts";
import type { PinnedToolset } from "../../src/shared/toolset.ts";
import type { BenchContext } from "../context.ts";
import { callsScript } from "../drivers.ts";
import { ECHO_TOOL } from "../mcp-server.ts";
import { mean, median, p95, since } from "../stats.ts";

export interface SandboxResult {
  warm: {
    steps: number;
    medianMs: number;
    p95Ms: number;
    meanMs: number;
    first100MedianMs: number;
    last100MedianMs: number;
  };
  cold: { n: number; samples: number[]; medianMs: number; perCompletionUs: number }[];
  /** A new run's first step (build its isolate, load the script, run it to its first call), ms. */
  firstStep: { rounds: number; medianMs: number };
  /**
   * One entry into an isolate that calls back into the host once, as a fed completion that issues
   * the next call does: with `apply` (what the sandbox uses: the isolate runs on another thread,
   * and the callback hops back to Node's) and with `applySync` (all on the calling thread), µs.
   */
  isolateEntryUs: { apply: number; applySync: number };
}

const TOOLSET: PinnedToolset = {
  format: 1,
  mcpServers: {
    svc: {
      url: "http://127.0.0.1:9/mcp",
      tools: [
        { name: ECHO_TOOL.name, inputSchema: ECHO_TOOL.inputSchema, outputSchema: ECHO_TOOL.outputSchema ?? true },
      ],
    },
  },
  hostTools: {},
  workflows: {},
  policies: {},
};

const LIMITS = { memoryMb: 128, cpuMsPerStep: 2000, validate: validateAgainstSchema };
const STARTED_AT = Date.UTC(2030, 0, 1);

const batchOf = (seq: number): EventBatch => ({
  at: STARTED_AT + seq,
  events: [{ seq, ok: true, value: { i: seq - 1 } }],
});

export async function measureSandbox(ctx: BenchContext): Promise<SandboxResult> {
  const script = stripTypeScriptTypes(callsScript(), { mode: "strip" });
  const { warmSteps, coldSizes, coldRounds } = ctx.sizes.sandbox;

  const sandbox = createSandbox({ ...LIMITS, warmSessions: 8 });
  const runId = "run_benchwarm0000";
  const first = await sandbox.advance({
    runId,
    consumedBatches: 0,
    batches: [],
    cold: {
      script,
      input: { n: warmSteps + 1, width: 1 },
      toolset: TOOLSET,
      startedAt: STARTED_AT,
      history: [],
      knownCalls: 0,
    },
  });
  if (first.kind !== "waiting" || first.calls.length !== 1)
    throw new Error(`the first step answered ${JSON.stringify(first)}`);
  const steps: number[] = [];
  for (let seq = 1; seq <= warmSteps; seq++) {
    const started = performance.now();
    const result = await sandbox.advance({ runId, consumedBatches: seq - 1, batches: [batchOf(seq)] });
    steps.push(since(started));
    if (result.kind !== "waiting" || result.calls[0]?.seq !== seq + 1)
      throw new Error(`warm step ${seq} answered ${JSON.stringify(result)}`);
  }
  sandbox.dispose();
  const warm = {
    steps: warmSteps,
    medianMs: median(steps),
    p95Ms: p95(steps),
    meanMs: mean(steps),
    first100MedianMs: median(steps.slice(0, 100)),
    last100MedianMs: median(steps.slice(-100)),
  };
  ctx.log(
    `sandbox warm step: median ${warm.medianMs.toFixed(3)} ms, p95 ${warm.p95Ms.toFixed(3)} ms over ${warmSteps} steps`,
  );

  const cold: SandboxResult["cold"] = [];
  for (const n of coldSizes) {
    const history = Array.from({ length: n }, (_, i) => batchOf(i + 1));
    const samples: number[] = [];
    for (let round = 0; round < coldRounds; round++) {
      const fresh = createSandbox({ ...LIMITS, warmSessions: 1 });
      const started = performance.now();
      const result = await fresh.advance({
        runId: `run_benchcold${n}x${round}`,
        consumedBatches: n,
        batches: [],
        cold: {
          script,
          input: { n: n + 1, width: 1 },
          toolset: TOOLSET,
          startedAt: STARTED_AT,
          history,
          knownCalls: n,
        },
      });
      samples.push(since(started));
      fresh.dispose();
      if (result.kind !== "waiting" || result.calls[0]?.seq !== n + 1)
        throw new Error(`cold replay of ${n} answered ${JSON.stringify(result)}`);
    }
    const medianMs = median(samples);
    cold.push({ n, samples, medianMs, perCompletionUs: (medianMs * 1000) / n });
    ctx.log(`sandbox cold replay of ${n}: median ${medianMs.toFixed(1)} ms`);
  }
  const firstStep = await firstStepCost(script, Math.max(20, coldRounds * 10));
  ctx.log(`sandbox first step of a new run: ${firstStep.medianMs.toFixed(2)} ms (median of ${firstStep.rounds})`);
  const isolateEntryUs = await isolateEntryCost();
  ctx.log(
    `isolated-vm entry with a host callback: apply ${isolateEntryUs.apply.toFixed(0)} µs, applySync ${isolateEntryUs.applySync.toFixed(0)} µs`,
  );
  return { warm, cold, firstStep, isolateEntryUs };
}

async function firstStepCost(script: string, rounds: number): Promise<SandboxResult["firstStep"]> {
  const sandbox = createSandbox({ ...LIMITS, warmSessions: 0 });
  const samples: number[] = [];
  try {
    for (let round = 0; round < rounds + 2; round++) {
      const started = performance.now();
      const result = await sandbox.advance({
        runId: `run_benchfirst${round}`,
        consumedBatches: 0,
        batches: [],
        cold: {
          script,
          input: { n: 10, width: 1 },
          toolset: TOOLSET,
          startedAt: STARTED_AT,
          history: [],
          knownCalls: 0,
        },
      });
      if (round >= 2) samples.push(since(started));
      if (result.kind !== "waiting" || result.calls[0]?.seq !== 1)
        throw new Error(`a first step answered ${JSON.stringify(result)}`);
    }
  } finally {
    sandbox.dispose();
  }
  return { rounds, medianMs: median(samples) };
}

async function isolateEntryCost(): Promise<SandboxResult["isolateEntryUs"]> {
  const isolate = new ivm.Isolate({ memoryLimit: 32 });
  try {
    const context = await isolate.createContext();
    await context.global.set("host", new ivm.Callback((payload: string) => payload.length));
    const feed = (await context.eval("(function (event) { return host(event) + JSON.parse(event).seq; })", {
      reference: true,
    })) as ivm.Reference;
    const event = JSON.stringify({ seq: 1, ok: true, value: { i: 1 } });
    const rounds = 2000;
    const time = async (sync: boolean): Promise<number> => {
      const started = performance.now();
      for (let i = 0; i < rounds; i++) {
        if (sync) feed.applySync(undefined, [event], { timeout: 1000 });
        else await feed.apply(undefined, [event], { timeout: 1000 });
      }
      return (since(started) * 1000) / rounds;
    };
    await time(false);
    await time(true);
    return { apply: await time(false), applySync: await time(true) };
  } finally {
    isolate.dispose();
  }
}
