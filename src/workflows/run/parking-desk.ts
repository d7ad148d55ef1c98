/**
 * Parks a run's calls and tells the harness why: the run's status turns `parked` while any call
 * waits, and each parking is announced with its event (approval requested, schema changed,
 * credentials expired or short of scope, outcome unknown) before the call waits for its decision. A call in
 * flight that waits for input is held the same way (announced as input requested) until released.
 * Every change is told to RunStatus, whose current details name the calls waiting and for what.
 */
import {
  approvalRequested,
  credentialsExpired,
  inputRequested,
  outcomeUnknown,
  schemaChanged,
} from "../../shared/index.ts";
import type { CredentialRevisions, EventSchema, JournalEntry, RunInput } from "../../shared/index.ts";
import { emitEvent } from "./events.ts";
import type { JournalBook } from "./journal-book.ts";
import { ParkingLot, type Decision, type ParkDetails, type ParkReason } from "./parking.ts";
import type { RunStatus } from "./run-status.ts";

export class ParkingDesk {
  readonly lot: ParkingLot;
  private parkings = 0;
  private readonly run: RunInput;
  private readonly status: RunStatus;

  constructor(run: RunInput, status: RunStatus, journal: JournalBook) {
    this.run = run;
    this.status = status;
    this.lot = new ParkingLot(journal);
  }

  /** Parks a call, tells the harness why (unless it was told already), and waits for its decision. */
  async park(
    entry: JournalEntry,
    reason: ParkReason,
    details: ParkDetails = {},
    options: { announce?: boolean; seen?: CredentialRevisions } = {},
  ): Promise<Decision> {
    const { announce = true, seen } = options;
    const decided = this.lot.park(entry, reason, details, seen);
    // A run cancelled while it announces the parking never awaits the decision: handle it here.
    decided.catch(() => undefined);
    this.status.set("parked");
    this.parkings += 1;
    if (announce) await this.announce(entry, reason, details, this.parkings);
    const decision = await decided;
    if (this.lot.size === 0 && this.lot.held === 0) this.status.set("running");
    else this.status.touch();
    return decision;
  }

  /** Holds a call in flight as parked (its server asks for input) and tells the harness. */
  async hold(entry: JournalEntry, reason: ParkReason, details: ParkDetails): Promise<void> {
    this.lot.hold(entry, reason, details);
    if (this.status.state === "running") this.status.set("parked");
    else this.status.touch();
    await this.announce(entry, reason, details, 0);
  }

  /** Ends the hold on `seq`, if any; the run is running again once nothing else waits. */
  release(seq: number): void {
    if (!this.lot.release(seq)) return;
    if (this.lot.size === 0 && this.lot.held === 0 && this.status.state === "parked") this.status.set("running");
    else this.status.touch();
  }

  private async announce(entry: JournalEntry, reason: ParkReason, details: ParkDetails, nth: number): Promise<void> {
    const run = this.run;
    const call = { seq: entry.seq, tool: entry.tool };
    if (reason === "approval") {
      await emitEvent(run, "call.approval_requested", approvalRequested(call, entry.args), entry.seq);
    } else if (reason === "elicitationRequested") {
      const data = inputRequested(call, stringOr(details["message"], ""), objectOr(details["requestedSchema"], {}));
      await emitEvent(run, "call.input_requested", data, `${entry.seq}-${String(details["requestId"])}`);
    } else if (reason === "outcomeUnknown") {
      const data = outcomeUnknown(call, entry.args, stringOr(details["message"], ""), entry.attempts);
      await emitEvent(run, "call.outcome_unknown", data, `${entry.seq}-${nth}`);
    } else if (reason === "schemaChanged") {
      await emitEvent(
        run,
        "tool.schema_changed",
        schemaChanged(call, schemaOrNull(details["pinned"]), schemaOrNull(details["current"])),
        `${entry.seq}-${nth}`,
      );
    } else {
      const scopeAsked = stringOr(details["scopeAsked"], "");
      await emitEvent(
        run,
        "credentials.expired",
        credentialsExpired(call, reason, details.scope ?? null, scopeAsked, run.endUser),
        `${entry.seq}-${nth}`,
      );
    }
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const stringOr = (value: unknown, fallback: string): string => (typeof value === "string" ? value : fallback);
const objectOr = (value: unknown, fallback: Record<string, unknown>): Record<string, unknown> =>
  isObject(value) ? value : fallback;
const schemaOrNull = (value: unknown): EventSchema => (typeof value === "boolean" || isObject(value) ? value : null);
