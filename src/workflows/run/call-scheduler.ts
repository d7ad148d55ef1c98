/**
 * Keeps tool calls within their limits: at most 16 in flight per run, and at most a tool's own
 * `concurrency` for that tool. Calls wait in issue order; a call held back by its tool's limit
 * doesn't hold back calls of other tools. Built-ins (timers, signals) are not tool calls and
 * bypass the limits.
 */
import type { JournalEntry } from "../../shared/index.ts";

export class CallScheduler {
  private readonly queue: JournalEntry[] = [];
  private readonly perTool = new Map<string, number>();
  private running = 0;
  private paused = false;
  private readonly limit: number;
  private readonly toolLimit: (tool: string) => number;
  private readonly launch: (entry: JournalEntry, release: () => void) => void;

  /** `launch` starts a call and must call `release` exactly once, when the call has finished. */
  constructor(
    limit: number,
    toolLimit: (tool: string) => number,
    launch: (entry: JournalEntry, release: () => void) => void,
  ) {
    this.limit = limit;
    this.toolLimit = toolLimit;
    this.launch = launch;
  }

  /** Tool calls started and not finished. */
  get inFlight(): number {
    return this.running;
  }

  get queued(): number {
    return this.queue.length;
  }

  /** Starts no more calls (those in flight finish), e.g. before continue-as-new. */
  pause(): void {
    this.paused = true;
  }

  /** Takes the calls waiting for a place out of the queue, never to be sent (a rollback begins). */
  dropQueued(): JournalEntry[] {
    return this.queue.splice(0);
  }

  enqueue(entry: JournalEntry): void {
    this.queue.push(entry);
    this.pump();
  }

  private pump(): void {
    if (this.paused) return;
    for (let i = 0; i < this.queue.length && this.running < this.limit;) {
      const entry = this.queue[i];
      if (!entry) break;
      const active = this.perTool.get(entry.tool) ?? 0;
      if (active >= this.toolLimit(entry.tool)) {
        i += 1;
        continue;
      }
      this.queue.splice(i, 1);
      this.running += 1;
      this.perTool.set(entry.tool, active + 1);
      this.launch(entry, () => {
        this.running -= 1;
        this.perTool.set(entry.tool, (this.perTool.get(entry.tool) ?? 1) - 1);
        this.pump();
      });
    }
  }
}
