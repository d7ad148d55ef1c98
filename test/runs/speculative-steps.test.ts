import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { batchChain } from "../../src/shared/step.ts";
import type { SpeculativeStep } from "../../src/shared/step.ts";
import { JournalBook } from "../../src/workflows/run/journal-book.ts";
import { SpeculativeSteps, type StepQueue } from "../../src/workflows/run/speculative-steps.ts";

/** A journal with calls 1..n issued, and a queue that records what the run loop would get. */
function setup(n: number, oldRule = false) {
  const journal = new JournalBook();
  for (let seq = 1; seq <= n; seq++) journal.record({ seq, tool: "svc.echo", args: { seq } }, 0);
  const fed: number[] = [];
  const adopted: string[] = [];
  const queue: StepQueue = {
    get unfed() {
      return fed.length;
    },
    push: (seq) => {
      fed.push(seq);
    },
    pushAdopted: (result) => {
      adopted.push(JSON.stringify(result.calls.map((c) => c.seq)));
    },
  };
  let oldRuleApplies = oldRule;
  const speculative = new SpeculativeSteps(journal, queue, () => oldRuleApplies);
  const finish = (seq: number) => journal.complete(seq, { ok: true, value: seq }, 0);
  /** The run crosses the patch: from its next workflow task on, the new rule applies. */
  const upgrade = () => {
    oldRuleApplies = false;
  };
  return { journal, speculative, fed, adopted, finish, upgrade };
}

/** The step a worker would take with `seq` on top of `chain`, issuing call `issues`. */
const stepOn = (chain: string, at: number, issues: number, after?: number[]): SpeculativeStep => ({
  chain,
  at,
  ...(after ? { after } : {}),
  result: { kind: "waiting", calls: [{ seq: issues, tool: "svc.echo", args: {} }], logs: [] },
});

/** The chain a worker's isolate has after being fed `seq` alone at `at`, on top of the journal's batches. */
function chainAfter(journal: JournalBook, at: number, seq: number): string {
  const scratch = new JournalBook(structuredClone(journal.carry(0, {}, [])));
  scratch.entries[seq - 1] = { ...scratch.entries[seq - 1]!, status: "completed", result: seq };
  scratch.addBatch(at, [seq]);
  return scratch.chain;
}

describe("SpeculativeSteps", () => {
  it("adopts a speculative step taken on the journal's chain, and moves the chain on", () => {
    const { journal, speculative, fed, adopted, finish } = setup(2);
    const before = journal.chain;
    finish(1);
    speculative.consider(1, stepOn(before, 10, 2), false);
    expect(adopted).toEqual(["[2]"]);
    expect(fed).toEqual([]);
    expect(journal.batches).toEqual([{ at: 10, seqs: [1] }]);
    expect(journal.chain).not.toBe(before);
  });

  it("defers a step that follows a call still in flight, then adopts both in the worker's order", () => {
    const { journal, speculative, fed, adopted, finish } = setup(3);
    const c0 = journal.chain;
    // On the worker: seq 1 then seq 2 were fed. In history: seq 2's result came first.
    finish(2);
    speculative.consider(2, stepOn(chainAfter(journal, 10, 1), 11, 4, [1]), false);
    expect(speculative.deferredCount).toBe(1);
    finish(1);
    speculative.consider(1, stepOn(c0, 10, 3, []), false);
    expect(adopted).toEqual(["[3]", "[4]"]);
    expect(fed).toEqual([]);
    expect(speculative.deferredCount).toBe(0);
  });

  it("discards a deferred step as soon as the call it follows has finished without bringing its chain", () => {
    const { journal, speculative, fed, adopted, finish } = setup(3);
    const c0 = journal.chain;
    finish(2);
    speculative.consider(2, stepOn(chainAfter(journal, 10, 1), 11, 4, [1]), false);
    expect(speculative.deferredCount).toBe(1);
    // Seq 1 finished on another worker whose isolate fed it at another time: its step is adopted,
    // the journal's chain is not the one the deferred step needs, and nothing would ever bring it.
    finish(1);
    speculative.consider(1, stepOn(c0, 99, 3, []), false);
    expect(adopted).toEqual(["[3]"]);
    expect(fed).toEqual([2]);
    expect(speculative.deferredCount).toBe(0);
  });

  it("never defers a step that follows a finished call, a batch, or nothing it names", () => {
    const { journal, speculative, fed, finish } = setup(4);
    finish(1);
    speculative.feed(1);
    fed.length = 0;
    finish(2);
    // Follows seq 1, which has finished: its chain can't come.
    speculative.consider(2, stepOn(chainAfter(journal, 10, 1), 11, 5, [1]), false);
    finish(3);
    speculative.consider(3, stepOn("00000000deadbeef", 12, 6, [1, 2]), false);
    finish(4);
    speculative.consider(4, stepOn("00000000feedface", 13, 7), false);
    expect(fed).toEqual([2, 3, 4]);
    expect(speculative.deferredCount).toBe(0);
  });

  it("discards at once a step taken on a chain the journal does not have, so nothing waits on it", () => {
    const { journal, speculative, fed, adopted, finish } = setup(3);
    const c0 = journal.chain;
    finish(2);
    // Taken on another worker's isolate, fed something the journal never had.
    speculative.consider(2, stepOn("00000000deadbeef", 11, 4), false);
    expect(fed).toEqual([2]);
    expect(speculative.deferredCount).toBe(0);
    finish(1);
    // The journal has moved on (seq 2 waits to be fed): a step on c0 is not adopted either.
    speculative.consider(1, stepOn(c0, 10, 5), false);
    expect(fed).toEqual([2, 1]);
    expect(adopted).toEqual([]);
  });

  it("discards the steps a run deferred under the old rule as soon as the new one applies", () => {
    const { journal, speculative, fed, adopted, finish, upgrade } = setup(3, true);
    finish(3);
    speculative.consider(3, stepOn("00000000deadbeef", 12, 5), false);
    expect(speculative.deferredCount).toBe(1);
    upgrade();
    finish(1);
    speculative.consider(1, stepOn(journal.chain, 10, 4), false);
    expect(adopted).toEqual(["[4]"]);
    expect(fed).toEqual([3]);
    expect(speculative.deferredCount).toBe(0);
  });

  it("(old rule, runs started before the patch) defers a step that arrived before the one it follows, then adopts both in the worker's order", () => {
    const { journal, speculative, fed, adopted, finish } = setup(2, true);
    const c0 = journal.chain;
    // On the worker: seq 1 then seq 2 were fed. In history: seq 2's result came first.
    // The chain after seq 1 alone at 10, as the worker's isolate has it.
    const scratch = new JournalBook();
    for (let seq = 1; seq <= 2; seq++) scratch.record({ seq, tool: "svc.echo", args: {} }, 0);
    scratch.complete(1, { ok: true, value: 1 }, 0);
    scratch.addBatch(10, [1]);
    const c1 = scratch.chain;
    finish(2);
    speculative.consider(2, stepOn(c1, 11, 4), false);
    expect(adopted).toEqual([]);
    expect(speculative.deferredCount).toBe(1);
    finish(1);
    speculative.consider(1, stepOn(c0, 10, 3), false);
    expect(adopted).toEqual(["[3]", "[4]"]);
    expect(journal.batches).toEqual([
      { at: 10, seqs: [1] },
      { at: 11, seqs: [2] },
    ]);
    expect(fed).toEqual([]);
  });

  it("(old rule) discards a step taken on a chain the journal has left, and feeds its call with every deferred call before it", () => {
    const { journal, speculative, fed, adopted, finish } = setup(3, true);
    const c0 = journal.chain;
    finish(1);
    speculative.consider(1, stepOn(c0, 10, 4), false);
    finish(3);
    speculative.consider(3, stepOn("00000000deadbeef", 12, 5), false);
    expect(speculative.deferredCount).toBe(1);
    finish(2);
    // Taken on c0, which the journal has left: its isolate saw something else.
    speculative.consider(2, stepOn(c0, 11, 6), false);
    expect(adopted).toEqual(["[4]"]);
    expect(fed).toEqual([3, 2]);
    expect(speculative.deferredCount).toBe(0);
  });

  it("discards speculative steps while calls wait to be fed, or while draining", () => {
    const { journal, speculative, fed, adopted, finish } = setup(3);
    finish(1);
    speculative.feed(1);
    finish(2);
    speculative.consider(2, stepOn(journal.chain, 10, 4), false);
    expect(fed).toEqual([1, 2]);
    const other = setup(1);
    other.finish(1);
    other.speculative.consider(1, stepOn(other.journal.chain, 10, 2), true);
    expect(other.fed).toEqual([1]);
    expect(adopted).toEqual([]);
    expect(other.adopted).toEqual([]);
  });

  it("rebuilds the same chain from carried batches", () => {
    const { journal, speculative, finish } = setup(2);
    finish(1);
    speculative.consider(1, stepOn(journal.chain, 10, 3), false);
    finish(2);
    speculative.consider(2, stepOn(journal.chain, 11, 4), false);
    const carried = new JournalBook(journal.carry(0, {}, []));
    expect(carried.chain).toBe(journal.chain);
    expect(carried.lastAt).toBe(11);
  });
});

describe("SpeculativeSteps, whatever order results arrive in", () => {
  it("never defers a step once every call has finished, and feeds each call or adopts its step exactly once", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }).chain((n) =>
          fc.record({
            n: fc.constant(n),
            // Which worker's isolate took each call's step: 0 none (fed), 1 or 2 (two isolates that may diverge).
            takers: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: n, maxLength: n }),
            takeOrder: fc.shuffledSubarray(
              Array.from({ length: n }, (_, i) => i + 1),
              { minLength: n, maxLength: n },
            ),
            arrival: fc.shuffledSubarray(
              Array.from({ length: n }, (_, i) => i + 1),
              { minLength: n, maxLength: n },
            ),
            // Whether the run loop feeds what waits right after each arrival, or later.
            feedsAtOnce: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
            // Isolate 2 starts out fed something the journal never had (it lost a race before).
            secondDiverged: fc.boolean(),
          }),
        ),
        ({ n, takers, takeOrder, arrival, feedsAtOnce, secondDiverged }) => {
          const journal = new JournalBook();
          for (let seq = 1; seq <= n; seq++) journal.record({ seq, tool: "svc.echo", args: {} }, 0);
          const fedOnce: number[] = [];
          const waiting: number[] = [];
          const adopted: number[] = [];
          const queue: StepQueue = {
            get unfed() {
              return waiting.length;
            },
            push: (seq) => {
              waiting.push(seq);
              fedOnce.push(seq);
            },
            pushAdopted: (result) => {
              adopted.push(...result.calls.map((c) => -c.seq));
            },
          };
          const speculative = new SpeculativeSteps(journal, queue);
          const feedWaiting = () => {
            if (waiting.length > 0) journal.addBatch(journal.lastAt + 1, waiting.splice(0));
          };
          // Each isolate takes its calls' steps in the worker's order, on its own chain.
          const isolates = [1, 2].map((id) => ({
            chain: id === 2 && secondDiverged ? "00000000deadbeef" : journal.chain,
            after: [] as number[],
            at: 100 * id,
          }));
          const steps = new Map<number, SpeculativeStep>();
          for (const seq of takeOrder) {
            const taker = takers[seq - 1] ?? 0;
            const isolate = isolates[taker - 1];
            if (!isolate) continue;
            isolate.at += 1;
            // The step "issues" call -seq so the test can tell which call's step was adopted.
            steps.set(seq, {
              chain: isolate.chain,
              after: isolate.after,
              at: isolate.at,
              result: { kind: "waiting", calls: [{ seq: -seq, tool: "svc.echo", args: {} }], logs: [] },
            });
            isolate.chain = batchChain(isolate.chain, isolate.at, [seq]);
            isolate.after = [seq];
          }
          for (const [index, seq] of arrival.entries()) {
            journal.complete(seq, { ok: true, value: seq }, 0);
            const step = steps.get(seq);
            if (step) speculative.consider(seq, step, false);
            else speculative.feed(seq);
            if (feedsAtOnce[index]) feedWaiting();
          }
          expect(speculative.deferredCount).toBe(0);
          const handled = [...fedOnce, ...adopted].sort((a, b) => a - b);
          expect(handled).toEqual(Array.from({ length: n }, (_, i) => i + 1));
        },
      ),
      { numRuns: 3000 },
    );
  });
});
