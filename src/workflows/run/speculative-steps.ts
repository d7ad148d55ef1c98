/**
 * Decides what the run does with the speculative steps its workers took (`SpeculativeStep`): the
 * worker that finished a call fed the result to the run's warm isolate and took the script's
 * next step right there. The run *adopts* such a step when the journal has exactly the chain it
 * was taken on and nothing else waits to be fed: the isolate that took it was fed what the
 * journal holds, so the step is the one a replay would take. Results reach history in another
 * order than a worker took their steps, so a step taken right after another call's step
 * (`after`) is *deferred* while that call is still unfinished or itself deferred, and adopted
 * once the step before it is; never longer. Anything else (a step on a chain the journal has
 * left or will not reach, a result without a step, a drain) is *discarded*: the call is fed the
 * ordinary way, with every deferred call before it. Whatever order results arrive in and
 * whichever worker took them, a run whose calls have all finished defers nothing, so it always
 * takes its next step.
 *
 * Runs that started before `PATCHES.deferredStepsWaitOnlyForCallsInFlight` replay the older rule
 * while their history was recorded with it (a step was deferred for as long as its chain might
 * still come), and follow this one from their first new workflow task.
 */
import type { SpeculativeStep, StepResult } from "../../shared/index.ts";
import type { JournalBook } from "./journal-book.ts";

/** Where calls and adopted steps go to be taken by the run loop (the run's ReadyQueue). */
export interface StepQueue {
  readonly unfed: number;
  push(seq: number): void;
  pushAdopted(result: StepResult): void;
}

export class SpeculativeSteps {
  private readonly deferred = new Map<string, { seq: number; step: SpeculativeStep }>();
  private readonly journal: JournalBook;
  private readonly ready: StepQueue;
  private readonly defersWhileChainMayCome: () => boolean;
  /**
   * Set while the run loop feeds a batch through a local activity whose batch is not in the
   * journal yet: no speculative step is adopted meanwhile (its chain could only be judged against
   * a journal that is about to move), every call that finishes is fed next.
   */
  stepping = false;

  /** `defersWhileChainMayCome`: whether the run still follows the rule it started with before the patch. */
  constructor(journal: JournalBook, ready: StepQueue, defersWhileChainMayCome: () => boolean = () => false) {
    this.journal = journal;
    this.ready = ready;
    this.defersWhileChainMayCome = defersWhileChainMayCome;
  }

  /**
   * A call finished with the speculative step its worker took: adopts the step, defers it, or
   * discards it and feeds the call the ordinary way.
   */
  consider(seq: number, step: SpeculativeStep, draining: boolean): void {
    if (
      this.stepping ||
      draining ||
      this.ready.unfed > 0 ||
      this.journal.isPastChain(step.chain) ||
      this.deferred.has(step.chain)
    )
      return this.feed(seq);
    if (step.chain !== this.journal.chain) {
      if (!this.defersWhileChainMayCome() && !this.mayFollow(step)) return this.feed(seq);
      this.deferred.set(step.chain, { seq, step });
      return;
    }
    this.adopt(seq, step);
    for (let next = this.deferred.get(this.journal.chain); next; next = this.deferred.get(this.journal.chain)) {
      this.deferred.delete(this.journal.chain);
      this.adopt(next.seq, next.step);
    }
    // A deferred step whose predecessor has now finished without bringing its chain never will.
    if (
      this.deferred.size > 0 &&
      !this.defersWhileChainMayCome() &&
      [...this.deferred.values()].some(({ step: deferred }) => !this.mayFollow(deferred))
    )
      this.discardDeferred();
  }

  /** Whether a step may still be adopted: it follows one call's step, and that call is unfinished or deferred. */
  private mayFollow(step: SpeculativeStep): boolean {
    const [before, ...more] = step.after ?? [];
    if (before === undefined || more.length > 0) return false;
    const entry = this.journal.entry(before);
    if (!entry) return false;
    const finished = entry.status === "completed" || entry.status === "failed";
    return !finished || [...this.deferred.values()].some((deferred) => deferred.seq === before);
  }

  /** A call finished without a step to adopt: it, and every call deferred before it, is fed by the run. */
  feed(seq: number): void {
    this.discardDeferred();
    this.ready.push(seq);
  }

  /**
   * Discards every deferred step and sends its call to be fed the ordinary way (before
   * continue-as-new, or before a result without a step).
   */
  discardDeferred(): void {
    for (const { seq } of this.deferred.values()) this.ready.push(seq);
    this.deferred.clear();
  }

  get deferredCount(): number {
    return this.deferred.size;
  }

  private adopt(seq: number, step: SpeculativeStep): void {
    this.journal.addBatch(step.at, [seq]);
    this.ready.pushAdopted(step.result);
  }
}
