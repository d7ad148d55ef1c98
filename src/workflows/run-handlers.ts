/**
 * What the harness can ask of a run while it runs: its status and journal (queries), decisions
 * on parked calls (updates whose validators refuse calls that are not waiting), renewed
 * credentials and signals for the script.
 */
import { setHandler } from "@temporalio/workflow";
import type { CredentialRef } from "../shared/credentials.ts";
import {
  approveCallUpdate, credentialsRenewedSignal, deliverSignal, getJournalQuery, getStatusQuery, rejectCallUpdate, resumeCallUpdate,
} from "./messages.ts";
import type { ForkReplay } from "./fork-seed.ts";
import type { JournalBook } from "./journal-book.ts";
import type { ParkingLot } from "./parking.ts";
import type { RunStatus } from "./run-status.ts";
import type { SignalInbox } from "./signal-inbox.ts";

export interface RunHandlerDeps {
  /** When the script started (its clock's origin), as recorded with its first step. */
  startedAt(): number;
  status: RunStatus;
  journal: JournalBook;
  parking: ParkingLot;
  inbox: SignalInbox;
  credentials: CredentialRef;
  forkReplay: ForkReplay;
  callsInFlight(): number;
  /** Called before a signal is delivered (a stalled run of an earlier release wakes on it). */
  beforeSignal(): void;
}

export function registerRunHandlers(deps: RunHandlerDeps): void {
  const { journal, parking, inbox, credentials, forkReplay, status, startedAt } = deps;
  setHandler(getStatusQuery, () => ({ state: status.state, calls: { total: journal.callCount, inFlight: deps.callsInFlight() }, parked: parking.list() }));
  setHandler(approveCallUpdate, ({ seq }) => {
    parking.decide(seq, { approved: true });
    return { seq };
  }, { validator: ({ seq }) => parking.assertWaiting(seq) });
  setHandler(rejectCallUpdate, ({ seq, reason }) => {
    parking.decide(seq, { approved: false, reason: reason ?? "rejected by the harness" });
    return { seq };
  }, { validator: ({ seq }) => parking.assertWaiting(seq) });
  setHandler(resumeCallUpdate, ({ seq }) => {
    parking.decide(seq, { approved: true });
    return { seq };
  }, { validator: ({ seq }) => parking.assertWaiting(seq, ["credentialsExpired", "insufficientScope"]) });
  setHandler(credentialsRenewedSignal, ({ scope, revision }) => {
    // Calls sent from now on must not use credentials older than the write that woke them.
    credentials.minRevision = Math.max(credentials.minRevision ?? 0, revision);
    parking.resumeCredentials(scope);
  });
  setHandler(getJournalQuery, (options) => {
    const fork = forkReplay.view();
    const full = options?.withBatches ? { startedAt: startedAt(), batches: journal.batches } : {};
    return { ...journal.view(options?.afterSeq, options?.limit, options?.maxBytes), ...(fork ? { fork } : {}), ...full };
  });
  setHandler(deliverSignal, ({ name, payload }) => {
    deps.beforeSignal();
    inbox.deliver(name, payload);
  });
}
