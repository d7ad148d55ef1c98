/**
 * Reads of Temporal shared while they are under way: callers that ask for a key being read get
 * the same promise, so runs posted together cause one read, not one each. Nothing is kept once
 * the read ends, a failure included: the next caller reads again.
 */
export class InFlight<T> {
  private readonly pending = new Map<string, Promise<T>>();

  /** The read of `key` under way, or `read()` started now. */
  share(key: string, read: () => Promise<T>): Promise<T> {
    let pending = this.pending.get(key);
    if (!pending) {
      pending = read().finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    return pending;
  }
}
