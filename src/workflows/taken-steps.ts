/**
 * Decides whether the run uses the steps workers took with their calls' results (`Prestep`).
 * A step is used when the journal has exactly the chain it was taken on; each one used moves
 * the journal on, so a step that arrived early (its calls finished in one order on the worker
 * and reached history in another) is held until the step before it is used. Anything that
 * can't be used in order (a result without a step, a step taken on a chain the journal has
 * left, anything while draining) sends every held call to be fed the ordinary way, in the order
 * the results arrived: the isolate, fed something else, then gets a cold replay.
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

  constructor(journal: JournalBook, ready: StepQueue) {
    this.journal = journal;
    this.ready = ready;
  }

  /** A call finished with the step its worker took; feeds the call the ordinary way if the step can't be used. */
  offer(seq: number, step: Prestep, draining: boolean): void {
    if (draining || this.ready.unfed > 0 || this.journal.isPastChain(step.chain) || this.held.has(step.chain)) return this.feed(seq);
    if (step.chain !== this.journal.chain) {
      this.held.set(step.chain, { seq, step });
      return;
    }
    this.use(seq, step);
    for (let next = this.held.get(this.journal.chain); next; next = this.held.get(this.journal.chain)) {
      this.held.delete(this.journal.chain);
      this.use(next.seq, next.step);
    }
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
