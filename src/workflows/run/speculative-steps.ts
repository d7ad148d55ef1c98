/**
 * Decides whether the run uses the steps workers took with their calls' results (`Prestep`).
 * A step is used when the journal has exactly the chain it was taken on and nothing else waits
 * to be fed: the isolate that took it was fed what the journal holds, so the step is the one a
 * replay would take. Results reach history in another order than a worker took their steps,
 * so a step taken right after another call's step (`after`) is held while that call is still
 * unfinished or itself held, and used once the step before it is; never longer. Anything else
 * (a step on a chain the journal has left or will not reach, a result without a step, a
 * drain) feeds the call the ordinary way, with every held call before it. Whatever order
 * results arrive in and whichever worker took them, a run whose calls have all finished holds
 * nothing, so it always takes its next step.
 *
 * Runs that started before `PATCHES.heldStepsWaitOnlyForCallsInFlight` replay the older rule
 * while their history was recorded with it (a step was held for as long as its chain might
 * still come), and follow this one from their first new workflow task.
 */
import type { Prestep, StepResult } from "../../shared/index.ts";
import type { JournalBook } from "./journal-book.ts";

/** Where calls and steps go to be taken by the run loop (the run's ReadyQueue). */
export interface StepQueue {
  readonly unfed: number;
  push(seq: number): void;
  pushTaken(result: StepResult): void;
}

export class TakenSteps {
  private readonly held = new Map<string, { seq: number; step: Prestep }>();
  private readonly journal: JournalBook;
  private readonly ready: StepQueue;
  private readonly holdsEarlySteps: () => boolean;
  /**
   * Set while the run loop feeds a batch through a local activity whose batch is not in the
   * journal yet: no step is used meanwhile (its chain could only be judged against a journal
   * that is about to move), every call that finishes is fed next.
   */
  stepping = false;

  /** `holdsEarlySteps`: whether the run still follows the rule it started with before the patch. */
  constructor(journal: JournalBook, ready: StepQueue, holdsEarlySteps: () => boolean = () => false) {
    this.journal = journal;
    this.ready = ready;
    this.holdsEarlySteps = holdsEarlySteps;
  }

  /** A call finished with the step its worker took; feeds the call the ordinary way if the step can't be used. */
  offer(seq: number, step: Prestep, draining: boolean): void {
    if (
      this.stepping ||
      draining ||
      this.ready.unfed > 0 ||
      this.journal.isPastChain(step.chain) ||
      this.held.has(step.chain)
    )
      return this.feed(seq);
    if (step.chain !== this.journal.chain) {
      if (!this.holdsEarlySteps() && !this.mayFollow(step)) return this.feed(seq);
      this.held.set(step.chain, { seq, step });
      return;
    }
    this.use(seq, step);
    for (let next = this.held.get(this.journal.chain); next; next = this.held.get(this.journal.chain)) {
      this.held.delete(this.journal.chain);
      this.use(next.seq, next.step);
    }
    // A held step whose predecessor has now finished without bringing its chain never will.
    if (
      this.held.size > 0 &&
      !this.holdsEarlySteps() &&
      [...this.held.values()].some(({ step: held }) => !this.mayFollow(held))
    )
      this.release();
  }

  /** Whether a step may still be used: it follows one call's step, and that call is unfinished or held. */
  private mayFollow(step: Prestep): boolean {
    const [before, ...more] = step.after ?? [];
    if (before === undefined || more.length > 0) return false;
    const entry = this.journal.entry(before);
    if (!entry) return false;
    const finished = entry.status === "completed" || entry.status === "failed";
    return !finished || [...this.held.values()].some((held) => held.seq === before);
  }

  /** A call finished without a usable step: it, and every call held before it, is fed by the run. */
  feed(seq: number): void {
    this.release();
    this.ready.push(seq);
  }

  /** Sends every held call to be fed the ordinary way (before continue-as-new, or before a result without a step). */
  release(): void {
    for (const { seq } of this.held.values()) this.ready.push(seq);
    this.held.clear();
  }

  get heldCount(): number {
    return this.held.size;
  }

  private use(seq: number, step: Prestep): void {
    this.journal.addBatch(step.at, [seq]);
    this.ready.pushTaken(step.result);
  }
}
