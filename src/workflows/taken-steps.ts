/**
 * Decides whether the run uses the steps workers took with their calls' results (`Prestep`).
 * A step is used only when the journal has exactly the chain it was taken on and nothing else
 * waits to be fed: the isolate that took it was fed what the journal holds, so the step is the
 * one a replay would take. Any other step is dropped and its call fed the ordinary way, at once,
 * so every finished call reaches the run loop whichever worker took its step and in whatever
 * order results arrive: a run whose calls have all finished always takes its next step.
 *
 * Runs that started before `PATCHES.stepsUsedOnlyInOrder` replay the older rule while their
 * history was recorded with it: a step taken on a chain the journal might still reach was held
 * until the step before it was used. Held steps are released the moment the new rule applies.
 */
import type { Prestep, StepResult } from "../shared/step.ts";
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

  /** `holdsEarlySteps`: whether the run still follows the rule it started with before the patch. */
  constructor(journal: JournalBook, ready: StepQueue, holdsEarlySteps: () => boolean = () => false) {
    this.journal = journal;
    this.ready = ready;
    this.holdsEarlySteps = holdsEarlySteps;
  }

  /** A call finished with the step its worker took; feeds the call the ordinary way if the step can't be used. */
  offer(seq: number, step: Prestep, draining: boolean): void {
    if (draining || this.ready.unfed > 0 || this.journal.isPastChain(step.chain) || this.held.has(step.chain)) return this.feed(seq);
    if (step.chain !== this.journal.chain) {
      if (!this.holdsEarlySteps()) return this.feed(seq);
      this.held.set(step.chain, { seq, step });
      return;
    }
    this.use(seq, step);
    for (let next = this.held.get(this.journal.chain); next; next = this.held.get(this.journal.chain)) {
      this.held.delete(this.journal.chain);
      this.use(next.seq, next.step);
    }
    if (this.held.size > 0 && !this.holdsEarlySteps()) this.release();
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
