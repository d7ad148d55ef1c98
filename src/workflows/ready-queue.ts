/**
 * The seqs of finished calls the script has not been fed yet, and a way for the run loop to
 * sleep until there is one. A resolved promise wakes the loop inside the activation that
 * finished the call; `condition()` would cost the workflow one more pass through its context
 * (the SDK re-checks conditions in a separate entry, each with its own deadlock timer).
 * Cancelling the run rejects the wait, as it would reject a condition.
 */
import { CancellationScope } from "@temporalio/workflow";

export class ReadyQueue {
  private readonly seqs: number[];
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

  get length(): number {
    return this.seqs.length;
  }

  push(seq: number): void {
    this.seqs.push(seq);
    const wake = this.wake;
    this.wake = this.fail = undefined;
    wake?.();
  }

  /** Everything waiting, in completion order, after waiting for at least one. */
  async takeAll(): Promise<number[]> {
    if (this.seqs.length === 0) {
      if (this.cancelled !== undefined) throw this.cancelled;
      await new Promise<void>((resolve, reject) => {
        this.wake = resolve;
        this.fail = reject;
      });
    }
    return this.seqs.splice(0);
  }

  /** What a continued run must still feed. */
  snapshot(): number[] {
    return [...this.seqs];
  }
}
