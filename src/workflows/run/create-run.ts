/**
 * Builds a run from its input: the journal and the queue of what to feed next, the desks that
 * send, park and report calls, the handlers that answer the harness, and the one way it ends.
 * The run loop (run-script.ts) drives what this builds through the few methods below; each part
 * lives in its own file. Construction order is part of every recorded history (some parts ask
 * for patches as they are made): it is the order the parts had when those histories ran.
 */
import { TemporalFailure, isCancellation, workflowInfo } from "@temporalio/workflow";
import { describeRunStart, firstStepInput, runCredentialRef, runtimeVersionOf } from "../../shared/index.ts";
import type { AdvanceInput, AdvanceResult, CredentialRef, RunInput } from "../../shared/index.ts";
import { CallReportDesk, registerCallReportHandlers } from "./call-report-desk.ts";
import { CallRunner } from "./call-runner.ts";
import { reportRunStarted } from "./call-spans.ts";
import { ChildRuns } from "./child-runs.ts";
import { ForkReplay } from "./fork-seed.ts";
import { JournalBook } from "./journal-book.ts";
import { feedWithWorkflowClock, followsDeferralRuleOfItsStart, wakeStalledDeferral } from "./legacy/index.ts";
import { Observations } from "./observations.ts";
import { ParkingDesk } from "./parking-desk.ts";
import { PATCHES } from "./patches.ts";
import { ReadyQueue } from "./ready-queue.ts";
import { Rollback } from "./rollback.ts";
import { RunEnding, STUCK, scriptFailure, type RunEnd } from "./run-ending.ts";
import { registerRunHandlers } from "./run-handlers.ts";
import { isPatched } from "./run-patches.ts";
import { RunStatus } from "./run-status.ts";
import { advanceScript, takeStep } from "./sandbox-step.ts";
import { ScriptApproval } from "./script-approval.ts";
import { SignalInbox } from "./signal-inbox.ts";
import { SpeculativeSteps } from "./speculative-steps.ts";

/** What a finished or failed step asks of the run loop. */
type Ended = Extract<AdvanceResult, { kind: "done" | "failed" }>;

export function createRun(input: RunInput): Run {
  return new Run(input);
}

export class Run {
  readonly input: RunInput;
  readonly journal: JournalBook;
  readonly ready: ReadyQueue;
  readonly rollback: Rollback;
  private readonly inbox: SignalInbox;
  private readonly speculative: SpeculativeSteps;
  private readonly calls: CallRunner;
  private readonly ending: RunEnding;
  private readonly scriptApproval: ScriptApproval;
  private readonly credentials: CredentialRef;
  /** The script's clock origin: when its first step was taken, as recorded with that step. */
  private startedAt: number;

  constructor(input: RunInput) {
    this.input = input;
    // Asked once: a run from before it sends its observations itself to its end, so no marker of
    // theirs can follow a local activity's result in a replay.
    const observesBySink = isPatched(PATCHES.observationsBySink);
    const journal = (this.journal = new JournalBook(input.carried));
    const inbox = (this.inbox = new SignalInbox(input.carried?.signals));
    this.startedAt = input.carried?.startedAt ?? Date.now();
    const ready = (this.ready = new ReadyQueue(input.carried?.unfed));
    const speculative = (this.speculative = new SpeculativeSteps(journal, ready, followsDeferralRuleOfItsStart));
    const observations = new Observations(input.namespace, input.toolsetId, input.toolset, observesBySink, {
      records: runtimeVersionOf(input) >= 4,
    });
    const status = new RunStatus();
    const parking = new ParkingDesk(input, status, journal);
    const children = new ChildRuns();
    const forkReplay = new ForkReplay(input.fork);
    // Activity input only: no command changes, so no patch.
    const credentials = (this.credentials = runCredentialRef(input, this.startedAt));
    const reports = new CallReportDesk({ run: input, namespace: input.namespace, journal, parking, status });
    const calls = (this.calls = new CallRunner({
      run: input,
      journal,
      speculative,
      observations,
      parking,
      forkReplay,
      inbox,
      children,
      credentials,
      reports,
      status,
    }));
    status.describeFrom(
      () => ({ parked: parking.lot.list(), inFlight: calls.active }),
      input.carried ? describeRunStart(input).staticSummary : undefined,
    );
    const ending = (this.ending = new RunEnding({
      run: input,
      startedAt: () => this.startedAt,
      status,
      observations,
      children,
      callCount: () => journal.callCount,
      lastReceived: () => {
        const seq = journal.completionOrder.at(-1);
        return seq === undefined ? undefined : journal.entry(seq);
      },
      unfinished: () =>
        journal.unfinished().map(({ seq, tool, status }) => ({
          seq,
          tool,
          status: status === "parked" || status === "running" ? status : "pending",
        })),
    }));
    // Reachable only through the rollbackRun update, onFailure or revert policies, which no earlier history holds.
    this.rollback = new Rollback(
      { run: input, journal, calls, parking: parking.lot, wakeLoop: () => ready.nudge(), ending: () => ending.begun },
      input.carried?.rollback,
    );
    this.rollback.register();
    const scriptApproval = (this.scriptApproval = new ScriptApproval(input, status));
    scriptApproval.register();
    registerRunHandlers({
      scriptApproval: () => scriptApproval.view,
      rollback: () => this.rollback.view,
      startedAt: () => this.startedAt,
      status,
      journal,
      parking: parking.lot,
      inbox,
      credentials,
      forkReplay,
      callsInFlight: () => calls.inFlight,
      renewRunCredentials(sealed) {
        credentials.runSealed = sealed;
        // The run it continues as starts from `input`: it carries the renewed credentials.
        input.credentials = sealed;
      },
      beforeSignal: () => wakeStalledDeferral(speculative),
    });
    registerCallReportHandlers(reports);
    // The run's root span goes out as it starts (a sink: no command), so its spans have their parent while it is open.
    if (!input.carried) reportRunStarted(input);
  }

  /**
   * The run's first outcome: for a continued run, what the last execution left in flight is sent
   * again under the same seqs; a new run waits for its script's approval if it asked for one, then
   * takes its first step (or adopts the one carried from beside the API). `ended` when the script
   * was rejected.
   */
  async begin(): Promise<{ outcome: AdvanceResult } | { ended: unknown }> {
    const { input } = this;
    if (input.carried) {
      if (!this.rollback.requested) this.journal.unfinished().forEach((entry) => this.calls.dispatch(entry));
      return { outcome: { kind: "waiting", calls: [], logs: [] } };
    }
    // Only a run that asked for it (input no earlier run holds: see ScriptApproval) waits here.
    if (this.scriptApproval.required) {
      const decision = await this.scriptApproval.wait();
      if (!decision.approved)
        return {
          ended: await this.end({ kind: "rejected", reason: decision.reason, decidedBy: decision.decidedBy }),
        };
    }
    // A step carried in the input was taken beside the API, which left the run's isolate warm there.
    const outcome =
      input.firstStep && !this.scriptApproval.required && isPatched(PATCHES.firstStepCarried)
        ? input.firstStep
        : await advanceScript(firstStepInput(input, this.startedAt, this.credentials));
    if (isPatched(PATCHES.batchTimesRecorded) && outcome.kind !== "needsColdStart" && outcome.startedAt !== undefined) {
      this.startedAt = outcome.startedAt;
      // Credentials read since then are fresh for the run: a step carried from beside the API
      // was taken before this task, and the read that opened its sessions serves its first calls.
      // Activity input only, and unchanged for a step taken in this task (it started at `startedAt`).
      this.credentials.notBefore = this.startedAt;
    }
    return { outcome };
  }

  /** Journals the calls a step issued and sends those not refused. */
  issue(outcome: Exclude<AdvanceResult, { kind: "needsColdStart" }>): void {
    for (const call of outcome.calls) {
      const entry = this.journal.record(call, Date.now());
      if (!call.refused) this.calls.dispatch(entry);
    }
  }

  /** Ends the run as its script did: completed, or failed (rolled back first under `onFailure: "rollback"`). */
  finish(outcome: Ended): Promise<unknown> {
    if (outcome.kind === "done")
      return this.end({ kind: "completed", result: outcome.result, eventsEndpoint: outcome.eventsEndpoint });
    if (this.input.onFailure === "rollback") {
      const { type, message } = scriptFailure(outcome.error);
      return this.rollBack({ kind: "scriptFailed", at: Date.now(), error: { type: type ?? "ScriptFailed", message } });
    }
    return this.end({ kind: "failed", error: outcome.error, eventsEndpoint: outcome.eventsEndpoint });
  }

  /**
   * The script waits and nothing is left to finish: ends the run stuck (rolled back under
   * onFailure), or answers undefined. A deferred step waits for a call in flight; with none
   * left, its call is fed the ordinary way first.
   */
  endIfStuck(): Promise<unknown> | undefined {
    if (this.calls.inFlight === 0 && this.speculative.deferredCount > 0) this.speculative.discardDeferred();
    if (this.calls.inFlight > 0 || this.ready.length > 0) return undefined;
    if (this.input.onFailure === "rollback")
      return this.rollBack({ kind: "scriptFailed", at: Date.now(), error: STUCK });
    return this.end({ kind: "stuck" });
  }

  /**
   * Before history grows too long: drains the calls being sent and continues as new, carrying the
   * journal. Adopted steps go first: their batches are in the journal, their calls not yet.
   */
  async continueAsNewIfDue(): Promise<void> {
    if (this.ready.length !== this.ready.unfed || !shouldContinueAsNew(this.input.continueAsNewAfterEvents)) return;
    this.calls.draining = true;
    this.speculative.discardDeferred();
    await this.ending.continueAsNew(this.calls, () => ({
      ...this.journal.carry(this.startedAt, this.inbox.snapshot(), this.ready.snapshot()),
      ...this.rollback.carried,
    }));
  }

  /** Feeds the script these finished calls as one batch and takes its next step. */
  async feed(seqs: number[]): Promise<AdvanceResult> {
    const { journal } = this;
    const base = { runId: this.input.runId, namespace: this.input.namespace, consumedBatches: journal.batches.length };
    const chain = journal.chain;
    const at = Math.max(Date.now(), journal.lastAt);
    const step = (stepInput: Omit<AdvanceInput, "cold">) => takeStep(stepInput, (consumed) => this.coldStart(consumed));
    if (!isPatched(PATCHES.batchTimesRecorded))
      return feedWithWorkflowClock(journal, seqs, at, step, { ...base, chain });
    // The batch is noted once the step returns, with the time the sandbox fed it at (recorded in its marker).
    this.speculative.stepping = true;
    let outcome: AdvanceResult;
    try {
      outcome = await step({ ...base, chain, batches: [journal.batchOf(at, seqs)] });
    } finally {
      this.speculative.stepping = false;
    }
    journal.addBatch(outcome.kind !== "needsColdStart" && outcome.fedAt !== undefined ? outcome.fedAt : at, seqs);
    return outcome;
  }

  /** Rolls the run back (`trigger`: the script failed under onFailure) and ends it rolledBack. */
  async rollBack(trigger?: Parameters<Rollback["begin"]>[0]): Promise<unknown> {
    if (trigger) this.rollback.begin(trigger);
    return this.end({ kind: "rolledBack", summary: await this.rollback.perform() });
  }

  /**
   * How an error out of the run loop ends the run: cancellation ends it cancelled; a failure of
   * the workflow (not its task) raised before any end began is announced as one (`broken`).
   * Anything else fails the workflow task, which Temporal retries.
   */
  endOnError(error: unknown): Promise<unknown> {
    if (isCancellation(error)) return this.end({ kind: "cancelled", cause: error });
    if (error instanceof TemporalFailure && !this.ending.begun && isPatched(PATCHES.statusAfterEveryEnd))
      return this.end({ kind: "broken", failure: error });
    throw error;
  }

  private end(end: RunEnd): Promise<unknown> {
    return this.ending.end(end);
  }

  /** A cold start's input: the script and everything fed in the first `consumedBatches` batches. */
  private coldStart(consumedBatches: number): NonNullable<AdvanceInput["cold"]> {
    const { input, journal } = this;
    return {
      script: input.script,
      input: input.input,
      toolset: input.toolset,
      startedAt: this.startedAt,
      history: journal.history().slice(0, consumedBatches),
      knownCalls: journal.callCount,
      ...(input.runtimeVersion === undefined ? {} : { runtimeVersion: input.runtimeVersion }),
    };
  }
}

function shouldContinueAsNew(afterEvents: number | undefined): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || (afterEvents !== undefined && info.historyLength >= afterEvents);
}
