/**
 * Calls parked before they are sent, waiting for the harness: the run stays alive for as long
 * as it takes (a Temporal condition, surviving restarts), and each call is decided exactly once
 * through an update whose validator refuses calls that are not waiting.
 */
import { condition } from "@temporalio/workflow";
import type { JournalEntry } from "../shared/journal.ts";

export type ParkReason = "approval";
export type Decision = { approved: true } | { approved: false; reason: string };

interface ParkedCall {
  entry: JournalEntry;
  reason: ParkReason;
  decision?: Decision;
}

export class ParkingLot {
  private readonly parked = new Map<number, ParkedCall>();

  get size(): number {
    return this.parked.size;
  }

  /** Waits for the call's decision. */
  async park(entry: JournalEntry, reason: ParkReason): Promise<Decision> {
    const call: ParkedCall = { entry, reason };
    this.parked.set(entry.seq, call);
    entry.status = "parked";
    await condition(() => call.decision !== undefined);
    this.parked.delete(entry.seq);
    return call.decision as Decision;
  }

  /** Throws (refusing the update) unless `seq` is parked and undecided. */
  assertWaiting(seq: number): void {
    const call = this.parked.get(seq);
    if (!call || call.decision) throw new Error(`call ${seq} is not waiting for a decision`);
  }

  decide(seq: number, decision: Decision): void {
    this.assertWaiting(seq);
    const call = this.parked.get(seq);
    if (call) call.decision = decision;
  }

  list(): { seq: number; tool: string; args: unknown; reason: ParkReason }[] {
    return [...this.parked.values()].filter((c) => !c.decision).map(({ entry, reason }) => ({ seq: entry.seq, tool: entry.tool, args: entry.args, reason }));
  }
}
