/**
 * The workflow's journal: entries by seq, the completion order, and how completions were
 * grouped into batches. A cold sandbox start is rebuilt from it, so batches keep only seqs and
 * times; the values live once, in the entries.
 *
 * It is the journal's one writer: every change to an entry (sent, parked, decided, attempted,
 * progressed, finished) is one of its methods, so what the journal query shows has one source.
 * The rest of the run reads entries and never assigns to them.
 */
import type {
  CallEvent,
  CallInputRecord,
  CallProgress,
  CallRollback,
  CredentialScope,
  Decider,
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

  /** The call is being sent: running, its first send's time kept, one attempt at least. */
  sending(seq: number, now: number): void {
    const entry = this.entryOf(seq);
    entry.status = "running";
    entry.startedAt ??= now;
    entry.attempts = Math.max(entry.attempts, 1);
  }

  /** The call is sent again from a first attempt (the harness chose to retry an unknown outcome). */
  sendingAgain(seq: number): void {
    const entry = this.entryOf(seq);
    entry.status = "running";
    entry.attempts = 1;
  }

  /** How many attempts the call has taken, and whose credentials its last one used. */
  attempted(seq: number, attempts: number, credentials?: CredentialScope): void {
    const entry = this.entryOf(seq);
    entry.attempts = attempts;
    if (credentials) entry.credentials = credentials;
  }

  /** The call waits in the parking lot: for a decision, or held in flight while its server asks. */
  parked(seq: number): void {
    this.entryOf(seq).status = "parked";
  }

  /** A parked call goes on: running again (a hold that ended, or a decision that lets it go on). */
  goesOn(seq: number): void {
    const entry = this.entryOf(seq);
    if (entry.status === "parked") entry.status = "running";
  }

  /** Approved before its first send: it waits for its place in the limits. */
  approved(seq: number): void {
    const entry = this.entryOf(seq);
    entry.approved = true;
    entry.status = "pending";
  }

  /** Who decided the parked call. */
  decided(seq: number, decidedBy: Decider): void {
    this.entryOf(seq).decidedBy = decidedBy;
  }

  /** The last progress the call's server reported. */
  progressed(seq: number, progress: CallProgress): void {
    this.entryOf(seq).progress = progress;
  }

  /** A question the call's server asked; the last `keep` are kept. */
  asked(seq: number, record: CallInputRecord, keep: number): void {
    const entry = this.entryOf(seq);
    entry.inputs = [...(entry.inputs ?? []), record].slice(-keep);
  }

  /** What a rollback did with the call: reverted it, or could not (and why). */
  rolledBack(seq: number, rollback: CallRollback): void {
    this.entryOf(seq).rollback = rollback;
  }

  /** The call repeats its fork parent's: its outcome is the parent's. */
  reusedFrom(seq: number, parentRunId: string): void {
    this.entryOf(seq).fromParent = parentRunId;
  }

  complete(
    seq: number,
    outcome: { ok: true; value: unknown } | { ok: false; error: ToolErrorData },
    now: number,
  ): void {
    const entry = this.entryOf(seq);
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

  private entryOf(seq: number): JournalEntry {
    const entry = this.entry(seq);
    if (!entry) throw new Error(`no journal entry for seq ${seq}`);
    return entry;
  }

  private eventOf(seq: number): CallEvent {
    const entry = this.entry(seq);
    if (!entry) throw new Error(`no journal entry for seq ${seq}`);
    if (entry.status === "completed") return { seq, ok: true, value: entry.result ?? null };
    if (entry.error) return { seq, ok: false, error: entry.error };
    throw new Error(`seq ${seq} has not completed`);
  }
}
