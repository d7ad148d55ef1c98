/**
 * A cold step replays the journal with synchronous entries into the isolate, paced so the event
 * loop keeps running: the replayed script must issue the very calls, with the very seqs, and
 * reach the very result a warm run of it did, and the step's limits must still hold.
 */
import { stripTypeScriptTypes } from "node:module";
import { afterEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { retryingWhileBusy } from "../helpers/busy-retry.ts";
import { ReplayPacer } from "../../src/sandbox/replay-pacer.ts";
import { validateAgainstSchema } from "../../src/schemas/index.ts";
import type { EventBatch } from "../../src/shared/journal.ts";
import type { AdvanceResult } from "../../src/shared/step.ts";
import { EMPTY_TOOLSET } from "../../src/shared/toolset.ts";

const sandboxes: Sandbox[] = [];
afterEach(() => {
  for (const box of sandboxes.splice(0)) box.dispose();
});

function make(warmSessions: number): Sandbox {
  const box = createSandbox({
    memoryMb: 64,
    cpuMsPerStep: 2_000,
    warmSessions,
    validate: validateAgainstSchema,
  });
  sandboxes.push(box);
  return box;
}

const cold = (script: string, input: unknown, history: EventBatch[], knownCalls: number) => ({
  script: stripTypeScriptTypes(script),
  input,
  toolset: EMPTY_TOOLSET,
  startedAt: 1_000,
  history,
  knownCalls,
});

/** Three lanes of sleeps whose timing, randomness and microtask order all reach the result. */
const LANES = `import { sleep } from "rewind:tools";
export default async function main(input: { n: number }) {
  const trace: number[] = [];
  const lane = async (k: number) => {
    for (let i = 0; i < input.n; i++) {
      await sleep(1 + k + (i % 3));
      trace.push(k, Date.now() % 100_000);
      if (Math.random() < 0.3) await Promise.resolve().then(() => trace.push(-k));
      if (i % 97 === 0) console.log("lane", k, i, Date.now());
    }
  };
  await Promise.all([lane(0), lane(1), lane(2)]);
  let hash = 0;
  for (const x of trace) hash = (hash * 31 + x) | 0;
  return { hash, length: trace.length, now: Date.now(), random: Math.random() };
}`;

describe("cold replay", () => {
  it("replays a run of 3,000 calls to the calls, seqs, logs and result of the warm run", async () => {
    const warm = make(8);
    const runId = "run_replay_many";
    const input = { n: 1_000 };
    const steps: AdvanceResult[] = [
      await warm.advance({ runId, consumedBatches: 0, batches: [], cold: cold(LANES, input, [], 0) }),
    ];
    const batches: EventBatch[] = [];
    for (let step = steps[0]; step?.kind === "waiting"; step = steps.at(-1)) {
      // Each step's calls come back together, in the reverse of their order.
      const batch: EventBatch = {
        at: 2_000 + batches.length * 7,
        events: step.calls.map((call) => ({ seq: call.seq, ok: true as const, value: null })).reverse(),
      };
      steps.push(await warm.advance({ runId, consumedBatches: batches.length, batches: [batch] }));
      batches.push(batch);
    }
    const last = steps.at(-1);
    expect(last?.kind).toBe("done");
    const warmCalls = steps.flatMap((step) => (step.kind === "needsColdStart" ? [] : step.calls));
    expect(warmCalls).toHaveLength(3_000);
    const warmLogs = steps.flatMap((step) => (step.kind === "needsColdStart" ? [] : step.logs));
    expect(warmLogs.length).toBeGreaterThan(0);
    expect(warmCalls.map((call) => call.seq)).toEqual(Array.from({ length: 3_000 }, (_, i) => i + 1));

    // Everything replayed but the last batch, which the cold step feeds as new.
    const history = batches.slice(0, -1);
    const fed = batches.at(-1);
    if (!fed) throw new Error("the warm run fed no batch");
    const replayed = await make(0).advance({
      runId,
      consumedBatches: history.length,
      batches: [fed],
      cold: cold(LANES, input, history, 3_000),
    });
    // A cold step's logs are those of the whole replay (the step's 200 lines at most).
    expect({ ...replayed, logs: [] }).toEqual({ ...last, logs: [] });
    expect(replayed.kind === "done" && replayed.logs).toEqual(warmLogs.slice(0, 200));
    // Known to the workflow or not, the replay issues the same calls with the same seqs.
    const all = await make(0).advance({
      runId,
      consumedBatches: history.length,
      batches: [fed],
      cold: cold(LANES, input, history, 0),
    });
    expect(all.kind === "done" && all.calls).toEqual(warmCalls);
  });

  it("replays a script that computes much per completion, whichever way its entries go, to the warm run's result", async () => {
    const script = `import { sleep } from "rewind:tools";
    export default async function main() {
      let x = 0;
      const spin = () => { for (let i = 0; i < 3e7; i++) x = (x + i * 7) % 1_000_003; };
      for (let i = 0; i < 4; i++) { await Promise.all([sleep(1), sleep(2)]); spin(); }
      return { x, now: Date.now(), random: Math.random() };
    }`;
    const warm = make(8);
    const runId = "run_replay_heavy";
    let step = await warm.advance({ runId, consumedBatches: 0, batches: [], cold: cold(script, null, [], 0) });
    const batches: EventBatch[] = [];
    while (step.kind === "waiting") {
      const batch = {
        at: 5_000 + batches.length,
        events: step.calls.map((call) => ({ seq: call.seq, ok: true as const, value: null })),
      };
      step = await warm.advance({ runId, consumedBatches: batches.length, batches: [batch] });
      batches.push(batch);
    }
    expect(step.kind).toBe("done");
    const replayed = await make(0).advance({
      runId,
      consumedBatches: batches.length - 1,
      batches: batches.slice(-1),
      cold: cold(script, null, batches.slice(0, -1), 8),
    });
    expect(replayed).toEqual(step);
  });

  it("ends a replayed step that exceeds the CPU limit with that limit", async () => {
    const script = `import { sleep } from "rewind:tools";
    export default async function main() { await sleep(1); if (Date.now() === 5_000) for (;;) {} return 1; }`;
    const box = createSandbox({ memoryMb: 64, cpuMsPerStep: 200, warmSessions: 0, validate: validateAgainstSchema });
    sandboxes.push(box);
    const history = [{ at: 5_000, events: [{ seq: 1, ok: true as const, value: null }] }];
    const result = await retryingWhileBusy(() =>
      box.advance({ runId: "run_spin", consumedBatches: 1, batches: [], cold: cold(script, null, history, 1) }),
    );
    expect(result).toMatchObject({ kind: "failed", error: { limit: "cpu" } });
  });
});

describe("replay pacer", () => {
  it("lets the event loop run between slices", async () => {
    const pacer = new ReplayPacer({ sliceMs: 0, heavyEntryMs: 1_000, heavyEntries: 1, capMs: 100 });
    let ran = false;
    setImmediate(() => {
      ran = true;
    });
    expect(pacer.due).toBe(true);
    await pacer.yield();
    expect(ran).toBe(true);
    expect(pacer.sync).toBe(true);
  });

  it("goes back to async entries after the heavy entries, each of the heavy entry's CPU time", () => {
    let cpu = 0;
    const pacer = new ReplayPacer({ sliceMs: 1_000, heavyEntryMs: 50, heavyEntries: 2, capMs: 100 }, () => cpu);
    const entry = (ms: number) => () => {
      cpu += ms;
      return ms;
    };
    const unused = () => Number.NaN;
    expect(pacer.enter(entry(49), unused)).toBe(49);
    expect(pacer.enter(entry(50), unused)).toBe(50);
    expect(pacer.sync).toBe(true);
    pacer.enter(entry(10), unused);
    expect(pacer.sync).toBe(true);
    pacer.enter(entry(70), unused);
    expect(pacer.sync).toBe(false);
    expect(pacer.due).toBe(false);
  });
});
