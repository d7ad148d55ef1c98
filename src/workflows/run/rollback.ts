/**
 * Rolls a run back: once asked (the harness's `rollbackRun` update, or a failed script under
 * `onFailure: "rollback"`), the script takes no further step. Calls that were never sent are
 * withdrawn (queued ones dropped, parked ones rejected); calls being sent are waited for, so an
 * at-most-once call in flight is neither sent twice nor forgotten. Then every completed call
 * whose tool's policy names a `revert` is reverted, newest seq first and one at a time, by a new
 * journaled call (the next seq, its own key `<run_id>/<seq>`, `revertOf` the call it undoes)
 * sent through the ordinary dispatch, so the revert tool's approval, at-most-once and retry
 * policies apply. What could not be reverted is kept with its reason.
 *
 * Only runs given the new update, the new run option or a toolset with revert policies ever get
 * here: no history recorded before this code holds any of them, so ordinary runs issue the same
 * commands in the same order and no patch is needed.
 */
import { condition, setHandler, upsertMemo } from "@temporalio/workflow";
import { fillTemplate, ROLLBACK_WITHDRAWN } from "../../shared/index.ts";
import type { JournalEntry, RollbackSummary, RollbackTrigger, RunInput } from "../../shared/index.ts";
import type { CallRunner } from "./call-runner.ts";
import type { JournalBook } from "./journal-book.ts";
import { rollbackRunUpdate } from "./messages.ts";
import type { ParkReason, ParkingLot } from "./parking.ts";

/** Parked calls that were never sent (or were refused before taking effect): withdrawn by a rollback. */
const WITHDRAWN: ReadonlySet<ParkReason> = new Set([
  "approval",
  "credentialsExpired",
  "insufficientScope",
  "schemaChanged",
]);

/** The most characters a principal, `by` or reason may have (the API allows as many). */
const MAX_TEXT = 1000;

export interface RollbackDeps {
  run: RunInput;
  journal: JournalBook;
  calls: CallRunner;
  parking: ParkingLot;
  /** Wakes the run loop, which looks at `requested` between steps. */
  wakeLoop(): void;
  /** Whether the run already began to end: too late to roll back. */
  ending(): boolean;
}

export class Rollback {
  private summary: RollbackSummary | undefined;
  private readonly deps: RollbackDeps;

  constructor(deps: RollbackDeps, carried?: RollbackTrigger) {
    this.deps = deps;
    if (carried) this.begin(carried);
  }

  /** Whether a rollback was asked for: the script takes no further step. */
  get requested(): boolean {
    return this.summary !== undefined;
  }

  /** The rollback so far, once asked for. */
  get view(): RollbackSummary | undefined {
    return this.summary;
  }

  /** The trigger a run continuing as new carries, if a rollback was asked for while it drained. */
  get carried(): { rollback?: RollbackTrigger } {
    return this.summary ? { rollback: this.summary.trigger } : {};
  }

  begin(trigger: RollbackTrigger): RollbackSummary {
    this.summary = { state: "rollingBack", trigger, reverted: [], notReverted: [], unfinished: [] };
    // Tells the API's reads that a rollback began, so the runs that have none cost no query.
    upsertMemo({ rollback: "rollingBack" });
    this.deps.wakeLoop();
    return this.summary;
  }

  /** The harness asks for a rollback; refused (→ 409) once the run is ending or already rolling back. */
  register(): void {
    setHandler(
      rollbackRunUpdate,
      ({ reason, decidedBy }) =>
        this.begin({
          kind: "requested",
          at: Date.now(),
          ...(decidedBy?.principal ? { principal: decidedBy.principal } : {}),
          ...(decidedBy?.by ? { by: decidedBy.by } : {}),
          ...(reason ? { reason } : {}),
        }),
      {
        validator: ({ reason, decidedBy }) => {
          if (this.summary) throw new Error("the run is rolling back already");
          if (this.deps.ending()) throw new Error("the run is ending; it can no longer be rolled back");
          for (const text of [reason, decidedBy?.principal, decidedBy?.by])
            if (text !== undefined && (typeof text !== "string" || text.length > MAX_TEXT))
              throw new Error(`reason, principal and by must be strings of at most ${MAX_TEXT} characters`);
        },
      },
    );
  }

  /** Stops what was not sent, waits for what is being sent, then reverts completed calls newest first. */
  async perform(): Promise<RollbackSummary> {
    const summary = this.summary;
    if (!summary) throw new Error("no rollback was asked for");
    const { calls, parking, journal } = this.deps;
    calls.dropQueued();
    const withdrawn = parking.list().filter((parked) => WITHDRAWN.has(parked.reason));
    for (const { seq } of withdrawn) parking.decide(seq, { approved: false, reason: ROLLBACK_WITHDRAWN });
    // Withdrawn calls end as rejected once their parking sees the decision.
    await condition(() => calls.sending === 0 && withdrawn.every(({ seq }) => journal.entry(seq)?.status !== "parked"));
    summary.unfinished = journal.unfinished().map(({ seq, tool, status }) => ({
      seq,
      tool,
      status: status === "parked" || status === "running" ? status : "pending",
    }));
    const candidates = journal.entries.filter((entry) => entry.revertOf === undefined).reverse();
    for (const entry of candidates) await this.revert(entry, summary);
    summary.state = "rolledBack";
    return summary;
  }

  private async revert(entry: JournalEntry, summary: RollbackSummary): Promise<void> {
    const policy = this.deps.run.toolset.policies[entry.tool]?.revert;
    if (!policy) return;
    const { seq, tool } = entry;
    const notReverted = (reason: string, revertSeq?: number): void => {
      this.deps.journal.rolledBack(seq, {
        outcome: "notReverted",
        reason,
        ...(revertSeq === undefined ? {} : { revertSeq }),
      });
      summary.notReverted.push({
        seq,
        tool,
        revertTool: policy.tool,
        reason,
        ...(revertSeq === undefined ? {} : { revertSeq }),
      });
    };
    if (entry.status === "failed" && entry.error?.code === "outcomeUnknown")
      return notReverted("its outcome is unknown: it may have taken effect; check it and undo it by hand if it did");
    if (entry.status !== "completed") return;
    const filled = fillTemplate(policy.args, { args: entry.args, result: entry.result });
    if (!filled.ok) return notReverted(`the revert's arguments could not be built: ${filled.reason}`);
    const revert = this.deps.journal.recordRevert(seq, policy.tool, filled.value, Date.now());
    this.deps.calls.dispatch(revert);
    await condition(() => revert.status === "completed" || revert.status === "failed");
    if (revert.status === "completed") {
      this.deps.journal.rolledBack(seq, { outcome: "reverted", revertSeq: revert.seq });
      summary.reverted.push({ seq, tool, revertSeq: revert.seq, revertTool: policy.tool });
      return;
    }
    const error = revert.error;
    notReverted(error ? `${error.code}: ${error.message}` : "the revert failed", revert.seq);
  }
}
