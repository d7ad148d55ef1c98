/**
 * The sandbox step on a real isolated-vm: warm and cold steps agree, the script sees a
 * deterministic clock and randomness, nothing of the host leaks in, and limits end a step
 * with an error that names them.
 */
import { stripTypeScriptTypes } from "node:module";
import { afterEach, describe, expect, it } from "vitest";
import { retryingWhileBusy } from "../helpers/busy-retry.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { MachineBusyError, createSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { validateAgainstSchema } from "../../src/schemas/index.ts";
import { EMPTY_CHAIN, batchChain, type AdvanceResult } from "../../src/shared/step.ts";
import { SANDBOX_RUNTIME_VERSION } from "../../src/shared/runtime-version.ts";
import { EMPTY_TOOLSET, type PinnedToolset } from "../../src/shared/toolset.ts";

let sandbox: Sandbox;
afterEach(() => sandbox?.dispose());

function make(warmSessions = 8): Sandbox {
  sandbox = createSandbox({ memoryMb: 64, cpuMsPerStep: 300, warmSessions, validate: validateAgainstSchema });
  return sandbox;
}

const cold = (
  script: string,
  input: unknown = null,
  toolset: PinnedToolset = EMPTY_TOOLSET,
  knownCalls = 0,
  history: { at: number; events: { seq: number; ok: true; value: unknown }[] }[] = [],
) => ({ script: stripTypeScriptTypes(script), input, toolset, startedAt: 1_000, history, knownCalls });

/** One cold step of `script`, taken again while the machine is too busy to give it its CPU time. */
async function once(script: string, input: unknown = null): Promise<AdvanceResult> {
  return retryingWhileBusy(() =>
    make().advance({ runId: "run_once", consumedBatches: 0, batches: [], cold: cold(script, input) }),
  );
}

const SLEEPER = `import { sleep } from "rewind:tools";
export default async function main() {
  const seen = [Date.now(), Math.random()];
  await sleep(5);
  seen.push(Date.now(), Math.random());
  await Promise.all([sleep(1), sleep(2)]);
  seen.push(Date.now());
  return seen;
}`;

describe("sandbox steps", () => {
  it("reports issued calls in seq order and resumes with fed completions", async () => {
    const box = make();
    const first = await box.advance({ runId: "run_a", consumedBatches: 0, batches: [], cold: cold(SLEEPER) });
    expect(first).toMatchObject({ kind: "waiting", calls: [{ seq: 1, tool: "rewind.sleep", args: { ms: 5 } }] });
    const second = await box.advance({
      runId: "run_a",
      consumedBatches: 0,
      batches: [{ at: 2_000, events: [{ seq: 1, ok: true, value: null }] }],
    });
    expect(second).toMatchObject({
      kind: "waiting",
      calls: [
        { seq: 2, args: { ms: 1 } },
        { seq: 3, args: { ms: 2 } },
      ],
    });
    const third = await box.advance({
      runId: "run_a",
      consumedBatches: 1,
      batches: [
        {
          at: 3_000,
          events: [
            { seq: 3, ok: true, value: null },
            { seq: 2, ok: true, value: null },
          ],
        },
      ],
    });
    expect(third.kind).toBe("done");
    expect(third.kind === "done" && third.result).toEqual([
      1_000,
      expect.any(Number),
      2_000,
      expect.any(Number),
      3_000,
    ]);
  });

  it("asks for a cold start when the warm session is missing or elsewhere, and a cold replay gives the same result", async () => {
    const box = make();
    const batches = [
      { at: 2_000, events: [{ seq: 1, ok: true as const, value: null }] },
      {
        at: 3_000,
        events: [
          { seq: 2, ok: true as const, value: null },
          { seq: 3, ok: true as const, value: null },
        ],
      },
    ];
    await box.advance({ runId: "run_w", consumedBatches: 0, batches: [], cold: cold(SLEEPER) });
    await box.advance({ runId: "run_w", consumedBatches: 0, batches: [batches[0]!] });
    const warm = await box.advance({ runId: "run_w", consumedBatches: 1, batches: [batches[1]!] });
    expect(await box.advance({ runId: "run_x", consumedBatches: 1, batches: [] })).toEqual({ kind: "needsColdStart" });
    const replayed = await make(0).advance({
      runId: "run_w",
      consumedBatches: 1,
      batches: [batches[1]!],
      cold: cold(SLEEPER, null, EMPTY_TOOLSET, 3, [batches[0]!]),
    });
    expect(replayed).toEqual(warm);
  });

  it("enters a warm run's isolate on isolated-vm's threads: even its first heavy entry leaves the event loop turning", async () => {
    // Each completion computes for a while (the sandbox's clock is the run's, so by iterations).
    const HEAVY = `import { sleep } from "rewind:tools";
export default async function main() {
  let x = 0;
  for (let round = 0; round < 3; round++) {
    await sleep(1);
    for (let j = 0; j < 60_000_000; j++) x = (x * 31 + j) % 1000003;
  }
  return x;
}`;
    sandbox = createSandbox({ memoryMb: 64, cpuMsPerStep: 20_000, warmSessions: 4, validate: validateAgainstSchema });
    const first = await sandbox.advance({ runId: "run_heavy", consumedBatches: 0, batches: [], cold: cold(HEAVY) });
    expect(first).toMatchObject({ kind: "waiting", calls: [{ seq: 1, tool: "rewind.sleep" }] });
    /** Takes the step of `seq`'s completion, and measures it and the longest the event loop went without a turn. */
    const stepOf = async (seq: number) => {
      const turns: number[] = [];
      const ticking = setInterval(() => turns.push(performance.now()), 2);
      const began = performance.now();
      const step = await sandbox.speculate("run_heavy", { seq, ok: true, value: null });
      const ended = performance.now();
      clearInterval(ticking);
      const points = [began, ...turns.filter((t) => t > began && t < ended), ended];
      const longestStall = Math.max(...points.slice(1).map((t, i) => t - points[i]!));
      return { step, ms: ended - began, longestStall };
    };
    // A step after light ones (the run's first entry) computes for 100 ms or more, and the event
    // loop keeps turning all along: it is never this thread's work.
    for (const seq of [1, 2]) {
      const heavy = await stepOf(seq);
      expect(heavy.step).toMatchObject({
        result: { kind: "waiting", calls: [{ seq: seq + 1, tool: "rewind.sleep" }] },
      });
      expect(heavy.ms).toBeGreaterThan(100);
      expect(
        heavy.longestStall,
        `the event loop stalled ${heavy.longestStall} ms of a ${heavy.ms} ms step`,
      ).toBeLessThan(heavy.ms * 0.5);
    }
  });

  it("takes a speculative step with one finished call on the warm session, on the chain it had, and refuses a later step on another chain", async () => {
    const box = make();
    await box.advance({ runId: "run_p", consumedBatches: 0, chain: EMPTY_CHAIN, batches: [], cold: cold(SLEEPER) });
    const step = await box.speculate("run_p", { seq: 1, ok: true, value: null });
    expect(step).toMatchObject({
      chain: EMPTY_CHAIN,
      result: {
        kind: "waiting",
        calls: [
          { seq: 2, args: { ms: 1 } },
          { seq: 3, args: { ms: 2 } },
        ],
      },
    });
    // The script's clock never goes back: the step's time is at least the run's start.
    expect(step!.at).toBeGreaterThanOrEqual(1_000);
    // The warm session is now on the chain of the speculative step: a step on that chain is taken warm
    // (without the script's source, a missing or stale session could only answer needsColdStart).
    const after = batchChain(EMPTY_CHAIN, step!.at, [1]);
    expect(await box.advance({ runId: "run_p", consumedBatches: 1, chain: after, batches: [] })).toMatchObject({
      kind: "waiting",
    });
    // A step that expects the isolate as it was before the speculative step gets a cold start.
    expect(await box.advance({ runId: "run_p", consumedBatches: 1, chain: "00000000feedface", batches: [] })).toEqual({
      kind: "needsColdStart",
    });
    await box.advance({ runId: "run_q", consumedBatches: 0, chain: EMPTY_CHAIN, batches: [], cold: cold(SLEEPER) });
    const speculative = await box.speculate("run_q", { seq: 1, ok: true, value: null });
    const last = await box.advance({
      runId: "run_q",
      consumedBatches: 1,
      chain: batchChain(EMPTY_CHAIN, speculative!.at, [1]),
      batches: [
        {
          at: speculative!.at + 5,
          events: [
            { seq: 2, ok: true, value: null },
            { seq: 3, ok: true, value: null },
          ],
        },
      ],
    });
    expect(last.kind).toBe("done");
    expect(await box.speculate("run_none", { seq: 1, ok: true, value: null })).toBeUndefined();
  });

  it("gives a sleeping run's isolate back when its step ends, keeps one that waits for anything else, and replays it alike", async () => {
    const script = `import { sleep, waitForSignal } from "rewind:tools";
export default async function main() {
  await sleep("5s");
  const raced = await Promise.race([sleep("1m"), waitForSignal("go")]);
  await sleep("1m");
  return [Date.now(), raced];
}`;
    const box = make();
    const fed = (seq: number, at: number, value: unknown = null) => ({
      at,
      events: [{ seq, ok: true as const, value }],
    });
    // A 5 s sleep is short: the session stays warm and takes the next step.
    expect(await box.advance({ runId: "run_s", consumedBatches: 0, batches: [], cold: cold(script) })).toMatchObject({
      kind: "waiting",
      calls: [{ seq: 1, tool: "rewind.sleep", args: { ms: 5_000 } }],
    });
    expect(box.warmCount).toBe(1);
    // A long sleep raced with a signal: the signal may come at any time, so it stays warm.
    const raced = await box.advance({ runId: "run_s", consumedBatches: 0, batches: [fed(1, 6_000)] });
    expect(raced).toMatchObject({ kind: "waiting", calls: [{ seq: 2 }, { seq: 3, tool: "rewind.waitForSignal" }] });
    expect(box.warmCount).toBe(1);
    // The signal wins; what is left is one long sleep: the isolate is given back at once.
    const sleeping = await box.advance({ runId: "run_s", consumedBatches: 1, batches: [fed(3, 7_000, "hi")] });
    expect(sleeping).toMatchObject({
      kind: "waiting",
      calls: [{ seq: 4, tool: "rewind.sleep", args: { ms: 60_000 } }],
    });
    expect(box.warmCount).toBe(0);
    const woken = fed(4, 70_000);
    expect(await box.advance({ runId: "run_s", consumedBatches: 2, batches: [woken] })).toEqual({
      kind: "needsColdStart",
    });
    const replayed = await box.advance({
      runId: "run_s",
      consumedBatches: 2,
      batches: [woken],
      cold: cold(script, null, EMPTY_TOOLSET, 4, [fed(1, 6_000), fed(3, 7_000, "hi")]),
    });
    expect(replayed).toMatchObject({ kind: "done", result: [70_000, "hi"] });
  });

  it("gives back a warm isolate that is not stepped within the idle time", async () => {
    sandbox = createSandbox({
      memoryMb: 64,
      cpuMsPerStep: 300,
      warmSessions: 8,
      warmIdleMs: 300,
      validate: validateAgainstSchema,
    });
    await sandbox.advance({ runId: "run_idle", consumedBatches: 0, batches: [], cold: cold(SLEEPER) });
    expect(sandbox.warmCount).toBe(1);
    const box = sandbox;
    await waitFor("the idle session to be given back", () => (box.warmCount === 0 ? true : undefined), {
      timeoutMs: 5_000,
    });
    expect(await box.advance({ runId: "run_idle", consumedBatches: 0, batches: [] })).toEqual({
      kind: "needsColdStart",
    });
  });

  it("takes no speculative step while the run's other step outlasts the wait, nor a later one until the workflow fed that result", async () => {
    sandbox = createSandbox({
      memoryMb: 64,
      cpuMsPerStep: 300,
      warmSessions: 8,
      validate: validateAgainstSchema,
      speculativeStepWaitMs: 0,
    });
    const script = `import { sleep } from "rewind:tools";
export default async function main() {
  await sleep(1);
  await Promise.all([sleep(2), sleep(3)]);
  await sleep(4);
  return "ok";
}`;
    const run = "run_busy";
    const fed = (at: number, seq: number) => ({ at, events: [{ seq, ok: true as const, value: null }] });
    await sandbox.advance({ runId: run, consumedBatches: 0, chain: EMPTY_CHAIN, batches: [], cold: cold(script) });
    const stepping = sandbox.advance({ runId: run, consumedBatches: 0, chain: EMPTY_CHAIN, batches: [] });
    // The advance above holds the run's turn: the step is left to the workflow.
    expect(await sandbox.speculate(run, { seq: 1, ok: true, value: null })).toBeUndefined();
    await stepping;
    // The workflow feeds it: the session is where the journal is, so the step is warm.
    const afterOne = await sandbox.advance({
      runId: run,
      consumedBatches: 0,
      chain: EMPTY_CHAIN,
      batches: [fed(2_000, 1)],
    });
    expect(afterOne).toMatchObject({ kind: "waiting", calls: [{ seq: 2 }, { seq: 3 }] });
    // Call 2 failed: the workflow feeds it, and call 3's result, finished after it, waits its turn.
    sandbox.notSpeculated(run, 2);
    expect(await sandbox.speculate(run, { seq: 3, ok: true, value: null })).toBeUndefined();
    const chain1 = batchChain(EMPTY_CHAIN, 2_000, [1]);
    expect(
      await sandbox.advance({ runId: run, consumedBatches: 1, chain: chain1, batches: [fed(3_000, 2)] }),
    ).toMatchObject({ kind: "waiting", calls: [] });
    const chain2 = batchChain(chain1, 3_000, [2]);
    expect(
      await sandbox.advance({ runId: run, consumedBatches: 2, chain: chain2, batches: [fed(4_000, 3)] }),
    ).toMatchObject({ kind: "waiting", calls: [{ seq: 4 }] });
    // Nothing owed any more: the next result is fed speculatively again.
    expect(await sandbox.speculate(run, { seq: 4, ok: true, value: null })).toMatchObject({
      chain: batchChain(chain2, 4_000, [3]),
      result: { kind: "done", result: "ok" },
    });
  });

  it("seeds Math.random from the run id", async () => {
    const script = "export default async () => [Math.random(), Math.random()];";
    const a1 = await make().advance({ runId: "run_seed_a", consumedBatches: 0, batches: [], cold: cold(script) });
    const a2 = await make().advance({ runId: "run_seed_a", consumedBatches: 0, batches: [], cold: cold(script) });
    const b = await make().advance({ runId: "run_seed_b", consumedBatches: 0, batches: [], cold: cold(script) });
    expect(a1).toEqual(a2);
    expect(b).not.toEqual(a1);
  });

  it("gives the script no host objects, timers or runtime internals", async () => {
    const result = await once(`export default async function main() {
      const g = globalThis as Record<string, unknown>;
      return {
        process: typeof g.process, require: typeof g.require, setTimeout: typeof g.setTimeout, fetch: typeof g.fetch,
        internal: typeof g.__rewindInternal, host: typeof g.__rewindHost,
        fnThis: typeof (Function("return this")() as Record<string, unknown>).process,
      };
    }`);
    expect(result).toMatchObject({
      kind: "done",
      result: {
        process: "undefined",
        require: "undefined",
        setTimeout: "undefined",
        fetch: "undefined",
        internal: "undefined",
        host: "undefined",
        fnThis: "undefined",
      },
    });
  });

  it("refuses imports other than rewind:tools", async () => {
    const result = await once('import fs from "node:fs";\nexport default async () => fs;');
    expect(result).toMatchObject({
      kind: "failed",
      error: { message: expect.stringMatching(/may import only "rewind:tools"/) },
    });
  });

  it("names the CPU and memory limits when a step exceeds them", async () => {
    expect(await once("export default async () => { for (;;) {} };")).toMatchObject({
      kind: "failed",
      error: { limit: "cpu" },
    });
    // Generous CPU, so that only the heap limit can end this one, however busy the machine.
    const roomy = createSandbox({
      memoryMb: 64,
      cpuMsPerStep: 10_000,
      warmSessions: 0,
      validate: validateAgainstSchema,
    });
    const bomb = await retryingWhileBusy(() =>
      roomy.advance({
        runId: "run_bomb",
        consumedBatches: 0,
        batches: [],
        cold: cold(
          "export default async () => { const a: number[][] = []; for (;;) a.push(new Array(1e6).fill(1)); };",
        ),
      }),
    );
    roomy.dispose();
    expect(bomb).toMatchObject({ kind: "failed", error: { limit: "memory" } });
    // A loop hidden in a microtask chain is bounded too.
    expect(await once("export default async () => { for (;;) await null; };")).toMatchObject({
      kind: "failed",
      error: { limit: "cpu" },
    });
  });

  it("throws MachineBusyError, not a script failure, when an entry meets the wall-time backstop within its CPU time; the next step replays", async () => {
    // A backstop of 150 ms of wall time against 10 s of CPU: a machine that could not give the step its CPU.
    sandbox = createSandbox({
      memoryMb: 64,
      cpuMsPerStep: 10_000,
      warmSessions: 8,
      wallBackstop: { perCpuMs: 0, extraMs: 150 },
      validate: validateAgainstSchema,
    });
    const script = 'import { sleep } from "rewind:tools";\nexport default async () => { await sleep(1); for (;;) {} };';
    const first = await sandbox.advance({ runId: "run_starved", consumedBatches: 0, batches: [], cold: cold(script) });
    expect(first).toMatchObject({ kind: "waiting", calls: [{ seq: 1, tool: "rewind.sleep" }] });
    const fed = {
      runId: "run_starved",
      consumedBatches: 0,
      batches: [{ at: 2_000, events: [{ seq: 1, ok: true as const, value: null }] }],
    };
    const began = performance.now();
    const starved = sandbox.advance(fed);
    await expect(starved).rejects.toBeInstanceOf(MachineBusyError);
    await expect(starved).rejects.toMatchObject({
      name: "MachineBusyError",
      message: expect.stringMatching(/machine is too busy/),
    });
    expect(performance.now() - began).toBeLessThan(5_000);
    // The isolate was given back: the step is taken again from the journal.
    expect(await sandbox.advance(fed)).toEqual({ kind: "needsColdStart" });
    expect(sandbox.warmCount).toBe(0);
    // A step well within the backstop is not touched by it.
    const quick = await sandbox.advance({
      runId: "run_quick",
      consumedBatches: 0,
      batches: [],
      cold: cold("export default async () => 42;"),
    });
    expect(quick).toMatchObject({ kind: "done", result: 42 });
  });

  it("collects console output of a step, bounded", async () => {
    const result = await once(
      'export default async () => { console.log("hello", { a: 1 }); for (let i = 0; i < 500; i++) console.warn(i); return 1; };',
    );
    expect(result.kind).toBe("done");
    const logs = result.kind === "done" ? result.logs : [];
    expect(logs[0]).toBe('[info] hello {"a":1}');
    expect(logs).toHaveLength(200);
  });

  it("refuses a call with invalid arguments in the script, with a seq, and reports it for the journal", async () => {
    const result = await once(
      'import { sleep } from "rewind:tools";\nexport default async () => { try { await sleep(-5); } catch (e) { return (e as { code: string }).code; } };',
    );
    expect(result).toMatchObject({
      kind: "done",
      result: "invalidArguments",
      calls: [{ seq: 1, refused: { code: "invalidArguments", seq: 1 } }],
    });
  });

  it("fails with the script's position for a non-Error throw and a missing default export", async () => {
    expect(await once('export default async () => { throw "plain"; };')).toMatchObject({
      kind: "failed",
      error: { message: expect.stringContaining("plain") },
    });
    expect(await once("export const x = 1;")).toMatchObject({
      kind: "failed",
      error: { message: expect.stringMatching(/default export must be a function/) },
    });
  });

  it("steps runs of the runtime version they started on, and refuses a newer one with a clear error", async () => {
    const box = make();
    const v1 = await box.advance({
      runId: "run_v1",
      consumedBatches: 0,
      batches: [],
      cold: { ...cold("export default async () => 1;"), runtimeVersion: 1 },
    });
    expect(v1).toMatchObject({ kind: "done", result: 1 });
    const unversioned = await box.advance({
      runId: "run_v0",
      consumedBatches: 0,
      batches: [],
      cold: cold("export default async () => 2;"),
    });
    expect(unversioned).toMatchObject({ kind: "done", result: 2 });
    await expect(
      box.advance({
        runId: "run_v99",
        consumedBatches: 0,
        batches: [],
        cold: { ...cold("export default async () => 3;"), runtimeVersion: 99 },
      }),
    ).rejects.toThrow(new RegExp(`started on sandbox runtime 99; this worker has runtime ${SANDBOX_RUNTIME_VERSION}`));
  });
});
