/**
 * Isolates built ahead: the pool fills to its size and no further, refills after a take, gives
 * each shell out once and disposes what it holds; a run in a pooled isolate sees what a run in
 * a fresh one sees, and its heap limit.
 */
import { stripTypeScriptTypes } from "node:module";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/wait-for.ts";
import { createIsolatePool, type IsolatePool } from "../../src/sandbox/isolate-pool.ts";
import { createSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { validateAgainstSchema } from "../../src/schemas/index.ts";
import { EMPTY_TOOLSET } from "../../src/shared/toolset.ts";

const owned: { dispose(): void }[] = [];
afterEach(() => {
  for (const thing of owned.splice(0)) thing.dispose();
});

function pool(size: number, idle?: () => boolean): IsolatePool {
  const made = createIsolatePool({ size, memoryMb: 32, ...(idle ? { idle } : {}) });
  owned.push(made);
  return made;
}

function sandbox(isolatePool: number, memoryMb = 64, cpuMsPerStep = 1_000): Sandbox {
  const made = createSandbox({ memoryMb, cpuMsPerStep, warmSessions: 0, isolatePool, validate: validateAgainstSchema });
  owned.push(made);
  return made;
}

const cold = (script: string) => ({
  script: stripTypeScriptTypes(script),
  input: null,
  toolset: EMPTY_TOOLSET,
  startedAt: 1_000,
  history: [],
  knownCalls: 0,
});

describe("isolate pool", () => {
  it("fills to its size and no further, refills after a take, and gives each shell out once", async () => {
    const shells = pool(3);
    await shells.filled();
    expect(shells.ready).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(shells.ready).toBe(3);

    const first = await shells.take();
    const second = await shells.take();
    expect(first).not.toBe(second);
    expect(first.memoryMb).toBe(32);
    expect(shells.ready).toBe(1);
    shells.refill();
    await waitFor("the pool to refill", () => shells.ready === 3, { intervalMs: 5 });
    const third = await shells.take();
    expect([first, second]).not.toContain(third);
    for (const shell of [first, second, third]) shell.isolate.dispose();
  });

  it("disposes the shells it holds, and builds none after", async () => {
    const shells = pool(2);
    await shells.filled();
    const held = [await shells.take(), await shells.take()];
    for (const shell of held) shell.isolate.dispose();
    shells.refill();
    await shells.filled();
    const kept = [await shells.take(), await shells.take()];
    // Wait for the shells that replace them, then dispose the pool.
    shells.refill();
    await shells.filled();
    expect(shells.ready).toBe(2);
    shells.dispose();
    expect(shells.ready).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(shells.ready).toBe(0);
    for (const shell of kept) {
      expect(shell.isolate.isDisposed).toBe(false);
      shell.isolate.dispose();
    }
    // Taken after disposal: built on demand, not kept.
    const late = await shells.take();
    expect(shells.ready).toBe(0);
    late.isolate.dispose();
  });

  it("builds only while its owner is idle", async () => {
    let idle = false;
    const shells = pool(2, () => idle);
    await shells.filled();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(shells.ready).toBe(0);
    idle = true;
    shells.refill();
    await shells.filled();
    expect(shells.ready).toBe(2);
  });

  it("a size of 0 keeps none and builds each shell on demand", async () => {
    const shells = pool(0);
    await shells.filled();
    expect(shells.ready).toBe(0);
    const shell = await shells.take();
    expect(shells.ready).toBe(0);
    shell.isolate.dispose();
  });

  it("gives a script in a pooled isolate the same global, clock and randomness as a fresh one", async () => {
    const script = `export default async function main() {
      const g = globalThis as Record<string, unknown>;
      return {
        names: Object.getOwnPropertyNames(globalThis).sort(),
        symbols: Object.getOwnPropertySymbols(globalThis).length,
        host: typeof g.__rewindHost, internal: typeof g.__rewindInternal,
        now: Date.now(), random: [Math.random(), Math.random()],
        date: String(new Date()), arrayBuffer: ArrayBuffer === new ArrayBuffer(1).constructor,
      };
    }`;
    const pooled = sandbox(2);
    await waitFor("the pool to fill", () => pooled.pooledCount === 2, { intervalMs: 5 });
    const fromPool = await pooled.advance({ runId: "run_pooled", consumedBatches: 0, batches: [], cold: cold(script) });
    const fresh = await sandbox(0).advance({
      runId: "run_pooled",
      consumedBatches: 0,
      batches: [],
      cold: cold(script),
    });
    expect(fromPool.kind).toBe("done");
    expect(fromPool).toEqual(fresh);
    expect(fromPool.kind === "done" && fromPool.result).toMatchObject({ host: "undefined", internal: "undefined" });
  });

  it("never gives a second run the isolate of the first", async () => {
    const pooled = sandbox(1);
    await waitFor("the pool to fill", () => pooled.pooledCount === 1, { intervalMs: 5 });
    const marker =
      "export default async () => { const g = globalThis as Record<string, unknown>; const seen = g.marker; g.marker = 1; return seen ?? null; };";
    for (const runId of ["run_first", "run_second", "run_third"]) {
      const result = await pooled.advance({ runId, consumedBatches: 0, batches: [], cold: cold(marker) });
      expect(result).toMatchObject({ kind: "done", result: null });
    }
  });

  it("holds a pooled isolate to the sandbox's memory limit", async () => {
    const pooled = sandbox(1, 64, 10_000);
    await waitFor("the pool to fill", () => pooled.pooledCount === 1, { intervalMs: 5 });
    const bomb = await pooled.advance({
      runId: "run_bomb",
      consumedBatches: 0,
      batches: [],
      cold: cold("export default async () => { const a: number[][] = []; for (;;) a.push(new Array(1e6).fill(1)); };"),
    });
    expect(bomb).toMatchObject({ kind: "failed", error: { limit: "memory" } });
  });

  it("refills the sandbox's pool when its steps are done", async () => {
    const pooled = sandbox(2);
    await waitFor("the pool to fill", () => pooled.pooledCount === 2, { intervalMs: 5 });
    await Promise.all(
      ["run_a", "run_b", "run_c"].map((runId) =>
        pooled.advance({ runId, consumedBatches: 0, batches: [], cold: cold("export default async () => 1;") }),
      ),
    );
    await waitFor("the pool to refill", () => pooled.pooledCount === 2, { intervalMs: 5 });
  });

  it("empties the pool when the sandbox is disposed", async () => {
    const pooled = sandbox(2);
    await waitFor("the pool to fill", () => pooled.pooledCount === 2, { intervalMs: 5 });
    pooled.dispose();
    expect(pooled.pooledCount).toBe(0);
  });
});
