/**
 * A step's CPU limit is the CPU time its isolate got, and no entry holds the event loop long.
 * Busy processes beside the test (`node -e "for(;;){}"`, more than there are cores) stretch the
 * wall time of every entry to several times its CPU time: a script well within its CPU limit
 * completes, one past it still fails on it, and a cold replay whose entry is heavy is cut on
 * this thread and made again on isolated-vm's threads, with the same result.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { availableParallelism } from "node:os";
import { stripTypeScriptTypes } from "node:module";
import ivm from "isolated-vm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { retryingWhileBusy } from "../helpers/busy-retry.ts";
import { createSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { PoolCpuLedger, poolCpuLedger } from "../../src/sandbox/pool-cpu-ledger.ts";
import { validateAgainstSchema } from "../../src/schemas/index.ts";
import { EMPTY_TOOLSET } from "../../src/shared/toolset.ts";

const LOOP = "(n) => { let x = 0; for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003; return x; }";

/** Iterations of LOOP per ms of this thread's CPU time, measured on a quiet machine. */
let perMs = 0;
let hogs: ChildProcess[] = [];
const sandboxes: Sandbox[] = [];

function threadCpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

beforeAll(async () => {
  const isolate = new ivm.Isolate({ memoryLimit: 32 });
  const context = await isolate.createContext();
  const loop = (await context.eval(LOOP, { reference: true })) as ivm.Reference;
  loop.applySync(undefined, [1_000_000]);
  const began = threadCpuMs();
  loop.applySync(undefined, [20_000_000]);
  perMs = 20_000_000 / (threadCpuMs() - began);
  isolate.dispose();
});
afterEach(() => {
  for (const box of sandboxes.splice(0)) box.dispose();
});
afterAll(() => stopHogs());

/** Keeps every core busy several times over, in other processes. */
async function startHogs(): Promise<void> {
  hogs = Array.from({ length: availableParallelism() * 3 }, () =>
    spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }),
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
}
function stopHogs(): void {
  for (const hog of hogs.splice(0)) hog.kill("SIGKILL");
}

function sandbox(cpuMsPerStep: number): Sandbox {
  const box = createSandbox({ memoryMb: 64, cpuMsPerStep, warmSessions: 4, validate: validateAgainstSchema });
  sandboxes.push(box);
  return box;
}

const computing = (cpuMs: number) =>
  stripTypeScriptTypes(`export default async function main() {
  const started = Date.now();
  return (${LOOP})(${Math.round(perMs * cpuMs)}) >= 0 ? "done" : started;
}`);

const cold = (script: string, history: { at: number; events: { seq: number; ok: true; value: unknown }[] }[] = []) => ({
  script,
  input: null,
  toolset: EMPTY_TOOLSET,
  startedAt: 1_000,
  history,
  knownCalls: history.length,
});

describe("the CPU limit, beside processes that keep every core busy", () => {
  it("the ledger charges an isolate the CPU its thread got, not the wall time it ran", async () => {
    expect(poolCpuLedger.measuresCpu).toBe(true);
    await startHogs();
    try {
      const isolate = new ivm.Isolate({ memoryLimit: 32 });
      const context = await isolate.createContext();
      const loop = (await context.eval(LOOP, { reference: true })) as ivm.Reference;
      const ledger = new PoolCpuLedger();
      const entry = ledger.begin(isolate, Number.POSITIVE_INFINITY, () => undefined);
      const wallBefore = isolate.wallTime;
      await loop.apply(undefined, [Math.round(perMs * 400)]);
      const charged = entry.end();
      const ranMs = Number(isolate.wallTime - wallBefore) / 1e6;
      isolate.dispose();
      // 400 ms of CPU, run while other processes held the cores: the wall time is much longer.
      expect(ranMs, `ran ${ranMs} ms`).toBeGreaterThan(800);
      expect(charged, `charged ${charged} ms for ${ranMs} ms of wall time`).toBeGreaterThan(250);
      expect(charged, `charged ${charged} ms for ${ranMs} ms of wall time`).toBeLessThan(650);
    } finally {
      stopHogs();
    }
  }, 60_000);

  it("a script within its limit completes, however long the machine makes it wait; one past it fails on it", async () => {
    await startHogs();
    try {
      // 500 ms of CPU against a limit of 1,000 ms: several seconds of wall time here. Half the
      // limit, because a contended core makes the same work cost more CPU time (600 ms of it was
      // once charged past 1,000 on a loaded machine).
      const began = performance.now();
      const within = await sandbox(1_000).advance({
        runId: "run_within",
        consumedBatches: 0,
        batches: [],
        cold: cold(computing(500)),
      });
      const tookMs = performance.now() - began;
      expect(within, `took ${Math.round(tookMs)} ms`).toMatchObject({ kind: "done", result: "done" });
      expect(tookMs).toBeGreaterThan(1_000);
      const past = await retryingWhileBusy(() =>
        sandbox(1_000).advance({ runId: "run_past", consumedBatches: 0, batches: [], cold: cold(computing(3_000)) }),
      );
      expect(past).toMatchObject({
        kind: "failed",
        error: { name: "LimitExceeded", limit: "cpu", message: expect.stringMatching(/CPU time limit of 1000 ms/) },
      });
    } finally {
      stopHogs();
    }
  }, 90_000);
});

describe("no entry holds the event loop long", () => {
  it("a cold replay's heavy entry is cut on this thread and made again on isolated-vm's threads", async () => {
    const rounds = Math.round(perMs * 300);
    const script = stripTypeScriptTypes(`import { sleep } from "rewind:tools";
export default async function main() {
  let x = 0;
  for (let round = 0; round < 3; round++) {
    await sleep(1);
    x += (${LOOP})(${rounds});
  }
  return x;
}`);
    const history = [1, 2].map((seq) => ({ at: 2_000 + seq, events: [{ seq, ok: true as const, value: null }] }));
    const turns: number[] = [];
    const ticking = setInterval(() => turns.push(performance.now()), 2);
    const began = performance.now();
    const replayed = await sandbox(5_000).advance({
      runId: "run_cut",
      consumedBatches: 2,
      batches: [],
      cold: cold(script, history),
    });
    const ended = performance.now();
    clearInterval(ticking);
    const points = [began, ...turns.filter((t) => t > began && t < ended), ended];
    const longestStall = Math.max(...points.slice(1).map((t, i) => t - points[i]!));
    expect(replayed).toMatchObject({ kind: "waiting", calls: [{ seq: 3, tool: "rewind.sleep" }] });
    // Two entries of ~300 ms each: before the cut one held the loop for all of it.
    expect(ended - began).toBeGreaterThan(500);
    expect(longestStall, `the event loop stalled ${Math.round(longestStall)} ms`).toBeLessThan(250);
    // And it replays to the state it had: the next completion ends the run as a warm step would.
    const last = await sandboxes.at(-1)!.advance({
      runId: "run_cut",
      consumedBatches: 2,
      batches: [{ at: 2_003, events: [{ seq: 3, ok: true, value: null }] }],
    });
    expect(last).toMatchObject({ kind: "done", result: expect.any(Number) });
  }, 60_000);
});
