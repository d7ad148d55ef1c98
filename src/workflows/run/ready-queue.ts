/**
 * What the run loop does next: feed the script the finished calls it has not seen yet, or take
 * a speculative step it adopted (`SpeculativeStep`: a worker took it with one call's result), and
 * a way for the loop to sleep until there is either. A resolved promise wakes the loop inside the activation that
 * finished the call; `condition()` would cost the workflow one more pass through its context
 * (the SDK re-checks conditions in a separate entry, each with its own deadlock timer).
 * Cancelling the run rejects the wait, as it would reject a condition.
 */
import { CancellationScope } from "@temporalio/workflow";
import type { StepResult } from "../../shared/index.ts";

export type NextStep = { kind: "adopted"; result: StepResult } | { kind: "feed"; seqs: number[] };

export class ReadyQueue {
  private readonly seqs: number[];
  private readonly adopted: StepResult[] = [];
  private wake: (() => void) | undefined;
  private fail: ((error: unknown) => void) | undefined;
  private cancelled: unknown;

  constructor(initial: readonly number[] = []) {
    this.seqs = [...initial];
    CancellationScope.current().cancelRequested.catch((error: unknown) => {
      this.cancelled = error;
      this.fail?.(error);
    });
  }

  /** Everything waiting: finished calls not fed yet, and adopted steps. */
  get length(): number {
    return this.seqs.length + this.adopted.length;
  }

  /** Finished calls not fed yet. */
  get unfed(): number {
    return this.seqs.length;
  }

  push(seq: number): void {
    this.seqs.push(seq);
    this.wakeLoop();
  }

  /** An adopted speculative step, whose batch the journal already holds; adopted steps go first, in order. */
  pushAdopted(result: StepResult): void {
    this.adopted.push(result);
    this.wakeLoop();
  }

  async next(): Promise<NextStep> {
    if (this.length === 0) {
      if (this.cancelled !== undefined) throw this.cancelled;
      await new Promise<void>((resolve, reject) => {
        this.wake = resolve;
        this.fail = reject;
      });
    }
    const result = this.adopted.shift();
    return result ? { kind: "adopted", result } : { kind: "feed", seqs: this.seqs.splice(0) };
  }

  /** Wakes the loop with nothing new to feed, to look at the run again (a rollback was asked for). */
  nudge(): void {
    this.wakeLoop();
  }

  /** What a continued run must still feed. */
  snapshot(): number[] {
    return [...this.seqs];
  }

  private wakeLoop(): void {
    const wake = this.wake;
    this.wake = this.fail = undefined;
    wake?.();
  }
}
