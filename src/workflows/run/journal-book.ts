/**
 * The workflow's journal: entries by seq, the completion order, and how completions were
 * grouped into batches. A cold sandbox start is rebuilt from it, so batches keep only seqs and
 * times; the values live once, in the entries.
 */
import type {
  CallEvent,
  EventBatch,
  IssuedCall,
  JournalEntry,
  CarriedJournal,
  JournalView,
  ToolErrorData,
} from "../../shared/index.ts";
import { EMPTY_CHAIN, batchChain } from "../../shared/index.ts";

export class JournalBook {
  readonly entries: JournalEntry[];
  readonly completionOrder: number[];
  readonly batches: { at: number; seqs: number[] }[];
  /** `batchChain` of every batch: what a warm isolate must have been fed to be used. */
  chain = EMPTY_CHAIN;
  /** Time of the last batch: the next is never earlier, so the script's clock never goes back. */
  lastAt = 0;
  /** Every chain the journal has had: a speculative step taken on one of them can no longer be adopted. */
  private readonly pastChains = new Set<string>();

  constructor(carried?: CarriedJournal) {
    this.entries = carried?.entries ?? [];
    this.completionOrder = carried?.completionOrder ?? [];
    this.batches = carried?.batches ?? [];
    for (const { at, seqs } of this.batches) this.link(at, seqs);
  }

  get callCount(): number {
    return this.entries.length;
  }

  entry(seq: number): JournalEntry | undefined {
    return this.entries[seq - 1];
  }

  /** Records a call the script issued; a refused call is recorded already failed. */
  record(call: IssuedCall, now: number): JournalEntry {
    if (call.seq !== this.entries.length + 1) {
      throw new Error(`journal out of step: expected seq ${this.entries.length + 1}, got ${call.seq}`);
    }
    const entry: JournalEntry = call.refused
      ? {
          seq: call.seq,
          tool: call.tool,
          args: call.args,
          status: "failed",
          error: call.refused,
          attempts: 0,
          issuedAt: now,
          completedAt: now,
        }
      : { seq: call.seq, tool: call.tool, args: call.args, status: "pending", attempts: 0, issuedAt: now };
    this.entries.push(entry);
    return entry;
  }

  /** Records a revert of the completed call `of`, made by a rollback: the next seq, its own key. */
  recordRevert(of: number, tool: string, args: unknown, now: number): JournalEntry {
    const entry: JournalEntry = {
      seq: this.entries.length + 1,
      tool,
      args,
      status: "pending",
      attempts: 0,
      issuedAt: now,
      revertOf: of,
    };
    this.entries.push(entry);
    return entry;
  }

  complete(
    seq: number,
    outcome: { ok: true; value: unknown } | { ok: false; error: ToolErrorData },
    now: number,
  ): void {
    const entry = this.entry(seq);
    if (!entry) throw new Error(`no journal entry for seq ${seq}`);
    entry.status = outcome.ok ? "completed" : "failed";
    if (outcome.ok) entry.result = outcome.value;
    else entry.error = outcome.error;
    entry.completedAt = now;
  }

  /** Notes that these completions were fed to the script together, at `at`. */
  addBatch(at: number, seqs: number[]): EventBatch {
    this.batches.push({ at, seqs });
    this.link(at, seqs);
    this.completionOrder.push(...seqs);
    return { at, events: seqs.map((seq) => this.eventOf(seq)) };
  }

  /** A batch of these completions at `at`, with values, not yet noted in the journal. */
  batchOf(at: number, seqs: number[]): EventBatch {
    return { at, events: seqs.map((seq) => this.eventOf(seq)) };
  }

  /** Every batch fed so far, with values, for a cold replay. */
  history(): EventBatch[] {
    return this.batches.map(({ at, seqs }) => ({ at, events: seqs.map((seq) => this.eventOf(seq)) }));
  }

  /** A page of entries after `afterSeq`: at most `limit`, and no more once they pass `maxBytes` of JSON. */
  view(afterSeq = 0, limit = Number.MAX_SAFE_INTEGER, maxBytes = Number.POSITIVE_INFINITY): JournalView {
    const entries = this.entries.slice(afterSeq, afterSeq + limit);
    if (maxBytes === Number.POSITIVE_INFINITY) return { entries, completionOrder: this.completionOrder };
    let bytes = 0;
    let fits = 0;
    for (const entry of entries) {
      bytes += JSON.stringify(entry).length;
      if (fits > 0 && bytes > maxBytes) break;
      fits += 1;
    }
    return {
      entries: entries.slice(0, fits),
      completionOrder: this.completionOrder,
      ...(fits < entries.length ? { truncated: true } : {}),
    };
  }

  carry(startedAt: number, signals: Record<string, unknown[]>, unfed: number[]): CarriedJournal {
    return {
      startedAt,
      entries: this.entries,
      completionOrder: this.completionOrder,
      batches: this.batches,
      signals,
      unfed,
    };
  }

  /** Calls issued and not finished: a continued run dispatches them again, under the same seq. */
  unfinished(): JournalEntry[] {
    return this.entries.filter(
      (entry) => entry.status === "pending" || entry.status === "running" || entry.status === "parked",
    );
  }

  /** Whether `chain` is one the journal has left behind (rather than one it may reach). */
  isPastChain(chain: string): boolean {
    return this.pastChains.has(chain);
  }

  private link(at: number, seqs: number[]): void {
    this.pastChains.add(this.chain);
    this.chain = batchChain(this.chain, at, seqs);
    this.lastAt = Math.max(this.lastAt, at);
  }

  private eventOf(seq: number): CallEvent {
    const entry = this.entry(seq);
    if (!entry) throw new Error(`no journal entry for seq ${seq}`);
    if (entry.status === "completed") return { seq, ok: true, value: entry.result ?? null };
    if (entry.error) return { seq, ok: false, error: entry.error };
    throw new Error(`seq ${seq} has not completed`);
  }
}
