/**
 * What the harness can ask of a run while it runs: its status and journal (queries), decisions
 * on parked calls (updates whose validators refuse calls that are not waiting), renewed
 * credentials and signals for the script.
 */
import { setHandler } from "@temporalio/workflow";
import type { CredentialRef, Decider, RollbackSummary, ScriptApprovalView } from "../../shared/index.ts";
import {
  approveCallUpdate,
  credentialsRenewedSignal,
  deliverSignal,
  failCallUpdate,
  getJournalQuery,
  getRunCredentialsQuery,
  getStatusQuery,
  rejectCallUpdate,
  resolveCallUpdate,
  resumeCallUpdate,
  retryCallUpdate,
  runCredentialsRenewedSignal,
  type CallDecided,
  type DeciderArgs,
} from "./messages.ts";
import type { ForkReplay } from "./fork-seed.ts";
import { PATCHES } from "./patches.ts";
import { isPatched } from "./run-patches.ts";
import type { JournalBook } from "./journal-book.ts";
import type { Decision, ParkReason, ParkingLot } from "./parking.ts";
import type { RunStatus } from "./run-status.ts";
import type { SignalInbox } from "./signal-inbox.ts";

export interface RunHandlerDeps {
  /** The run's rollback, once one began (shown by the status query). */
  rollback?: () => RollbackSummary | undefined;
  /** Where the run stands on its script's approval, when it asked for one (status and journal queries). */
  scriptApproval?: () => ScriptApprovalView | undefined;
  /** When the script started (its clock's origin), as recorded with its first step. */
  startedAt(): number;
  status: RunStatus;
  journal: JournalBook;
  parking: ParkingLot;
  inbox: SignalInbox;
  credentials: CredentialRef;
  forkReplay: ForkReplay;
  callsInFlight(): number;
  /** Replaces the run's own credentials for every call from now on, and for the run it continues as. */
  renewRunCredentials(sealed: string): void;
  /** Called before a signal is delivered (a stalled run of an earlier release wakes on it). */
  beforeSignal(): void;
}

export function registerRunHandlers(deps: RunHandlerDeps): void {
  const { journal, parking, inbox, credentials, forkReplay, status, startedAt } = deps;
  setHandler(getStatusQuery, () => ({
    state: status.state,
    calls: { total: journal.callCount, inFlight: deps.callsInFlight() },
    parked: parking.list(),
    ...(deps.rollback?.() ? { rollback: deps.rollback() } : {}),
    ...(deps.scriptApproval?.() ? { scriptApproval: deps.scriptApproval() } : {}),
  }));
  // Who decided travels in the update's args (recorded in history with it), so a replay records the same.
  const decide = (seq: number, decision: Decision, args: DeciderArgs, kind: Decider["decision"]): CallDecided => {
    const decidedBy = args.decidedBy ? { ...args.decidedBy, at: Date.now(), decision: kind } : undefined;
    parking.decide(seq, decision, decidedBy);
    return { seq, ...(decidedBy ? { decidedBy } : {}) };
  };
  setHandler(approveCallUpdate, (args) => decide(args.seq, { approved: true }, args, "approved"), {
    validator: (args) => {
      assertDecider(args);
      parking.assertWaiting(args.seq, APPROVABLE);
    },
  });
  setHandler(
    rejectCallUpdate,
    (args) => decide(args.seq, { approved: false, reason: args.reason ?? "rejected by the harness" }, args, "rejected"),
    {
      validator: (args) => {
        assertDecider(args);
        parking.assertWaiting(args.seq, APPROVABLE);
      },
    },
  );
  setHandler(resumeCallUpdate, (args) => decide(args.seq, { approved: true }, args, "resumed"), {
    validator: (args) => {
      assertDecider(args);
      parking.assertWaiting(args.seq, ["credentialsExpired", "insufficientScope"]);
    },
  });
  // A call parked on an unknown outcome is decided only by these three: no earlier history holds them.
  const unknownOutcome = (args: { seq: number } & DeciderArgs): void => {
    assertDecider(args);
    parking.assertWaiting(args.seq, ["outcomeUnknown"]);
  };
  setHandler(
    resolveCallUpdate,
    (args) => decide(args.seq, { approved: true, resolved: { value: args.result ?? null } }, args, "resolved"),
    {
      validator: (args) => {
        unknownOutcome(args);
        if (!("result" in args)) throw new Error("resolve needs the call's result");
      },
    },
  );
  setHandler(retryCallUpdate, (args) => decide(args.seq, { approved: true }, args, "retried"), {
    validator: unknownOutcome,
  });
  setHandler(
    failCallUpdate,
    (args) => decide(args.seq, { approved: false, reason: args.reason ?? "failed by the harness" }, args, "failed"),
    { validator: unknownOutcome },
  );
  setHandler(credentialsRenewedSignal, ({ scope, revision, toolsetId }) => {
    // Calls sent from now on must not use credentials older than the write that woke them.
    const base = toolsetId !== undefined && toolsetId !== credentials.toolsetId;
    if (base) {
      if (toolsetId !== credentials.baseToolsetId) return;
      credentials.baseMinRevision = Math.max(credentials.baseMinRevision ?? 0, revision);
    } else {
      credentials.minRevision = Math.max(credentials.minRevision ?? 0, revision);
    }
    // A call already refused with this write's credentials, or newer ones, waits for the next.
    const write = { revision, base };
    parking.resumeCredentials(
      scope,
      isPatched(PATCHES.unscopedParksWakeOnWrites),
      isPatched(PATCHES.credentialWaits) ? write : undefined,
    );
  });
  // Only messages no earlier history holds change state here, so no patch: the ref is activity
  // input, and resuming parked calls is what credentialsRenewed has always done.
  setHandler(runCredentialsRenewedSignal, ({ sealed }) => {
    deps.renewRunCredentials(sealed);
    parking.resumeCredentials("run", true);
  });
  setHandler(getRunCredentialsQuery, () => ({ sealed: credentials.runSealed ?? null }));
  setHandler(getJournalQuery, (options) => {
    const fork = forkReplay.view();
    const full = options?.withBatches ? { startedAt: startedAt(), batches: journal.batches } : {};
    const scriptApproval = deps.scriptApproval?.();
    return {
      ...(scriptApproval ? { scriptApproval } : {}),
      ...journal.view(options?.afterSeq, options?.limit, options?.maxBytes),
      ...(fork ? { fork } : {}),
      ...full,
    };
  });
  setHandler(deliverSignal, ({ name, payload }) => {
    deps.beforeSignal();
    inbox.deliver(name, payload);
  });
}

/**
 * What approve and reject decide: every decision park but an unknown outcome, which has its own
 * three decisions. A validator only refuses updates (never recorded), so narrowing it needs no patch.
 */
const APPROVABLE: ParkReason[] = ["approval", "credentialsExpired", "insufficientScope", "schemaChanged"];

/** The most characters a principal or `by` may have (the API allows 200 for `by`). */
const MAX_DECIDER = 200;

/** Refuses (as the validator) a decider that is not strings of sane length. */
export function assertDecider({ decidedBy }: DeciderArgs): void {
  if (decidedBy === undefined) return;
  const { principal, by } = decidedBy;
  if (typeof principal !== "string" || principal.length === 0 || principal.length > MAX_DECIDER)
    throw new Error("decidedBy.principal must be a string of 1 to 200 characters");
  if (by !== undefined && (typeof by !== "string" || by.length === 0 || by.length > MAX_DECIDER))
    throw new Error("decidedBy.by must be a string of 1 to 200 characters");
}
