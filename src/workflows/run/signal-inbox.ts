/**
 * Signals addressed to the script, buffered by name until `waitForSignal(name)` takes them, so
 * a signal that arrives before the script waits for it is not lost.
 */
import { condition } from "@temporalio/workflow";

export class SignalInbox {
  private readonly queues: Record<string, unknown[]>;
  /** Names delivered in this execution, taken or not. */
  private readonly received = new Set<string>();

  constructor(carried?: Record<string, unknown[]>) {
    this.queues = carried ?? {};
  }

  deliver(name: string, payload: unknown): void {
    this.received.add(name);
    (this.queues[name] ??= []).push(payload);
  }

  /** Whether `name` was delivered in this execution (carried signals count). */
  hasReceived(name: string): boolean {
    return this.received.has(name) || name in this.queues;
  }

  /** Resolves with the oldest payload of `name`, or `{ timedOut: true }` once `timeoutMs` passes. */
  async take(name: string, timeoutMs: number | null): Promise<{ payload: unknown } | { timedOut: true }> {
    const ready = () => (this.queues[name]?.length ?? 0) > 0;
    const arrived = timeoutMs === null ? (await condition(ready), true) : await condition(ready, timeoutMs);
    if (!arrived) return { timedOut: true };
    const queue = this.queues[name] ?? [];
    const payload = queue.shift();
    if (queue.length === 0) delete this.queues[name];
    return { payload };
  }

  snapshot(): Record<string, unknown[]> {
    return this.queues;
  }
}
