/**
 * Calls parked before they are sent, waiting for the harness: for approval, for renewed
 * credentials, for a decision on a changed schema, or, after an attempt whose outcome is unknown,
 * for what to do about it. The run stays alive for as long as it
 * takes (a Temporal condition, surviving restarts); each parked call is decided exactly once,
 * through an update whose validator refuses calls that are not waiting. A call in flight whose
 * server asks for input is held here too (`hold`): it waits for data, not a decision, so it is
 * listed as parked but never decided, and is released when answered or when its attempt ends.
 */
import { condition } from "@temporalio/workflow";
import type { CredentialRevisions, CredentialScope, Decider, JournalEntry } from "../../shared/index.ts";
import type { JournalBook } from "./journal-book.ts";

export type ParkReason =
  "approval" | "credentialsExpired" | "insufficientScope" | "schemaChanged" | "elicitationRequested" | "outcomeUnknown";
/** `resolved` ends a call parked on an unknown outcome with the harness's result, unsent. */
export type Decision = { approved: true; resolved?: { value: unknown } } | { approved: false; reason: string };

export interface ParkDetails {
  /** Credentials scope the call used, for expiry and scope parking. */
  scope?: CredentialScope | null;
  [key: string]: unknown;
}

interface ParkedCall {
  entry: JournalEntry;
  reason: ParkReason;
  details: ParkDetails;
  decision?: Decision;
  /** Held while in flight (waiting for input), not waiting for a decision. */
  held?: true;
  /** For a call refused with stored credentials: the revisions it was refused with. */
  seen?: CredentialRevisions;
}

/** A write of stored credentials, as a renewal tells it: its revision, and whether it was the base toolset's. */
export interface CredentialsWrite {
  revision: number;
  base: boolean;
}

export class ParkingLot {
  private readonly parked = new Map<number, ParkedCall>();
  /** Where a call's parking and its decider are written. */
  private readonly journal: Pick<JournalBook, "parked" | "goesOn" | "decided">;

  constructor(journal: Pick<JournalBook, "parked" | "goesOn" | "decided">) {
    this.journal = journal;
  }

  /** Calls waiting for a decision (outside the concurrency limits: they are not being sent). */
  get size(): number {
    let size = 0;
    for (const call of this.parked.values()) if (!call.held) size += 1;
    return size;
  }

  /** Calls held while in flight. */
  get held(): number {
    return this.parked.size - this.size;
  }

  /** Lists a call in flight as parked, without waiting: `release` ends it. A decision park of the same call replaces it. */
  hold(entry: JournalEntry, reason: ParkReason, details: ParkDetails): void {
    this.parked.set(entry.seq, { entry, reason, details, held: true });
    this.journal.parked(entry.seq);
  }

  /** Ends a hold (the call goes back to running); answers whether there was one. */
  release(seq: number): boolean {
    const call = this.parked.get(seq);
    if (!call?.held) return false;
    this.parked.delete(seq);
    this.journal.goesOn(seq);
    return true;
  }

  /** The details of the hold on `seq`, if it is held. */
  holdOf(seq: number): ParkDetails | undefined {
    const call = this.parked.get(seq);
    return call?.held ? call.details : undefined;
  }

  /** Waits for the call's decision. */
  async park(
    entry: JournalEntry,
    reason: ParkReason,
    details: ParkDetails = {},
    seen?: CredentialRevisions,
  ): Promise<Decision> {
    const call: ParkedCall = { entry, reason, details, ...(seen ? { seen } : {}) };
    this.parked.set(entry.seq, call);
    this.journal.parked(entry.seq);
    await condition(() => call.decision !== undefined);
    this.parked.delete(entry.seq);
    return call.decision as Decision;
  }

  /** Throws (refusing the update) unless `seq` is parked, undecided and, if given, for one of `reasons`. */
  assertWaiting(seq: number, reasons?: ParkReason[]): void {
    const call = this.parked.get(seq);
    if (!call || call.decision || call.held) throw new Error(`call ${seq} is not waiting for a decision`);
    if (reasons && !reasons.includes(call.reason))
      throw new Error(`call ${seq} is parked for ${call.reason}, not ${reasons.join(" or ")}`);
  }

  /** Decides `seq`; the harness's decisions name who decided, and the call's journal entry keeps it. */
  decide(seq: number, decision: Decision, decidedBy?: Decider): void {
    this.assertWaiting(seq);
    const call = this.parked.get(seq);
    if (!call) return;
    call.decision = decision;
    if (decidedBy) this.journal.decided(seq, decidedBy);
  }

  /**
   * Resumes every call parked on credentials of this scope; answers how many. With
   * `orNone`, calls that were sent with no credentials at all resume on any write too. Given the
   * `write`, a call refused with that revision or a newer one stays parked: it already saw it.
   */
  resumeCredentials(scope: CredentialScope, orNone = false, write?: CredentialsWrite): number {
    let resumed = 0;
    for (const call of this.parked.values()) {
      const sameScope = call.details.scope === scope || (orNone && (call.details.scope ?? null) === null);
      const seen = write && call.seen ? (write.base ? call.seen.base : call.seen.own) : undefined;
      if (
        (call.reason === "credentialsExpired" || call.reason === "insufficientScope") &&
        sameScope &&
        !call.decision &&
        (seen === undefined || (write !== undefined && write.revision > seen))
      ) {
        call.decision = { approved: true };
        resumed += 1;
      }
    }
    return resumed;
  }

  /** Calls parked or held, undecided. */
  list(): { seq: number; tool: string; args: unknown; reason: ParkReason; details: ParkDetails }[] {
    return [...this.parked.values()]
      .filter((c) => !c.decision)
      .map(({ entry, reason, details }) => ({ seq: entry.seq, tool: entry.tool, args: entry.args, reason, details }));
  }
}
