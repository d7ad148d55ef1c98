/**
 * Sends a run's calls and journals their outcomes: a fork reuses its parent's finished calls,
 * calls that need approval are parked first, a call whose outcome is unknown parks when its
 * policy says so, tool calls take their place in the run's and the
 * tool's concurrency limits, built-ins are served at once. Every finished call goes to
 * SpeculativeSteps, which adopts or defers the speculative step its worker took, or discards it
 * and queues the call to be fed. It keeps
 * the calls not finished, and tells RunStatus when one starts or ends (the run's current details).
 */
import { isCancellation } from "@temporalio/workflow";
import type { CredentialRef, JournalEntry, RunInput } from "../../shared/index.ts";
import { RUN_CONCURRENCY } from "../../shared/index.ts";
import { CallScheduler } from "./call-scheduler.ts";
import { awaitCredentialsWrite, waitsOnStoredCredentials } from "./credentials-wait.ts";
import { reportCallSpan, reportParked } from "./call-spans.ts";
import type { ChildRuns } from "./child-runs.ts";
import { dispatchCall, isBuiltin, type CallOutcome, type DispatchContext } from "./dispatch.ts";
import type { ForkReplay } from "./fork-seed.ts";
import type { JournalBook } from "./journal-book.ts";
import type { Observations } from "./observations.ts";
import type { ParkingDesk } from "./parking-desk.ts";
import { PATCHES } from "./patches.ts";
import { isPatched } from "./run-patches.ts";
import type { SignalInbox } from "./signal-inbox.ts";
import type { SpeculativeSteps } from "./speculative-steps.ts";

export interface CallRunnerDeps {
  run: RunInput;
  journal: JournalBook;
  speculative: SpeculativeSteps;
  observations: Observations;
  parking: ParkingDesk;
  forkReplay: ForkReplay;
  inbox: SignalInbox;
  children: ChildRuns;
  credentials: CredentialRef;
  /** Told when a call's dispatch is over, so nothing it reported while in flight stays open. */
  reports: { callEnded(seq: number): void };
  /** Told whenever a call starts or ends, for the run's current details. */
  status: { touch(): void };
}

/** Built-ins whose call is a wait: after one, a server's tools may have changed. */
const WAITING_BUILTINS = new Set(["rewind.sleep", "rewind.waitForSignal", "rewind.workflows.result"]);

export class CallRunner {
  /** Set while the run drains for continue-as-new: no speculative step is adopted. */
  draining = false;
  /** Waits finished so far (waiting built-ins, parked calls): MCP calls carry it (`McpCallInput.waits`). */
  private waits = 0;
  private readonly scheduler: CallScheduler;
  private builtinsInFlight = 0;
  /** Calls dispatched and not yet journaled as finished, by seq (parked ones included). */
  private readonly unfinished = new Map<number, JournalEntry>();
  private readonly deps: CallRunnerDeps;
  private readonly context: DispatchContext;

  constructor(deps: CallRunnerDeps) {
    this.deps = deps;
    const { run } = deps;
    this.context = {
      runId: run.runId,
      trace: run.trace,
      toolset: run.toolset,
      inbox: deps.inbox,
      run,
      credentials: deps.credentials,
      children: deps.children,
      park: async (entry, reason, details, seen) => {
        reportParked(run, entry, reason);
        const decided = deps.parking.park(entry, reason, details, seen ? { seen } : {});
        const told =
          seen && waitsOnStoredCredentials(reason, details) && isPatched(PATCHES.credentialWaits)
            ? awaitCredentialsWrite(deps.credentials, details.scope, seen)
            : undefined;
        const [decision] = await Promise.all([decided, told]);
        this.waits += 1;
        if (decision.approved) deps.journal.goesOn(entry.seq);
        return decision;
      },
      waits: () => this.waits,
    };
    this.scheduler = new CallScheduler(
      RUN_CONCURRENCY,
      (tool) => run.toolset.policies[tool]?.concurrency ?? RUN_CONCURRENCY,
      (entry, release) => void this.perform(entry, release),
    );
  }

  /** Calls not finished: sent, queued for a place, built-ins pending, or parked. */
  get inFlight(): number {
    return this.scheduler.inFlight + this.scheduler.queued + this.builtinsInFlight + this.deps.parking.lot.size;
  }

  /** Calls dispatched and not finished, in the order they were dispatched: what the run's details name. */
  get active(): Iterable<JournalEntry> {
    return this.unfinished.values();
  }

  /** Tool calls being sent right now (not queued, not parked). */
  get sending(): number {
    return this.scheduler.inFlight;
  }

  /** Stops sending queued calls (before continue-as-new; the next execution sends them). */
  pause(): void {
    this.scheduler.pause();
  }

  /**
   * Calls waiting for a place in the limits are never sent (a rollback begins); they stay
   * unfinished in the journal. Calls being sent go on.
   */
  dropQueued(): void {
    for (const entry of this.scheduler.dropQueued()) this.unfinished.delete(entry.seq);
    this.deps.status.touch();
  }

  dispatch(entry: JournalEntry): void {
    const { run, journal, speculative, forkReplay } = this.deps;
    const reused = forkReplay.reuse(entry);
    if (reused) {
      journal.reusedFrom(entry.seq, reused.parentRunId);
      journal.complete(entry.seq, reused.outcome, Date.now());
      speculative.feed(entry.seq);
      return;
    }
    this.unfinished.set(entry.seq, entry);
    this.deps.status.touch();
    if (run.toolset.policies[entry.tool]?.approval && !entry.approved) {
      void this.approveThenDispatch(entry).catch((error: unknown) => {
        if (!isCancellation(error)) throw error;
      });
      return;
    }
    if (!isBuiltin(entry.tool)) return this.scheduler.enqueue(entry);
    this.builtinsInFlight += 1;
    void this.perform(entry, () => {
      this.builtinsInFlight -= 1;
    });
  }

  /** Parks a call that needs approval (outside the concurrency limits), then sends or rejects it. */
  private async approveThenDispatch(entry: JournalEntry): Promise<void> {
    // A call carried over by continue-as-new already announced itself.
    const announce = entry.status !== "parked";
    if (announce) reportParked(this.deps.run, entry, "approval");
    const decision = await this.deps.parking.park(entry, "approval", {}, { announce });
    this.waits += 1;
    if (decision.approved) {
      this.deps.journal.approved(entry.seq);
      this.scheduler.enqueue(entry);
      return;
    }
    this.deps.journal.complete(
      entry.seq,
      {
        ok: false,
        error: { code: "rejected", message: `${entry.tool}: ${decision.reason}`, tool: entry.tool, seq: entry.seq },
      },
      Date.now(),
    );
    reportCallSpan(this.deps.run, entry, this.deps.run.toolset.policies[entry.tool]);
    this.finished(entry.seq);
    this.deps.speculative.feed(entry.seq);
  }

  private finished(seq: number): void {
    this.unfinished.delete(seq);
    this.deps.status.touch();
  }

  /**
   * Dispatches a call. One whose outcome is unknown parks when its policy says
   * `onUnknown: "park"` (keeping its place in the limits, so the run does not continue as new
   * under it) until the harness resolves it with its result, sends it again with the same key
   * (one attempt more), or fails it. The policy field is newer than every recorded history, so
   * no earlier run takes this branch: no patch.
   */
  private async send(entry: JournalEntry): Promise<CallOutcome> {
    const { journal } = this.deps;
    let outcome = await this.attempt(entry);
    while (
      !outcome.ok &&
      outcome.error.code === "outcomeUnknown" &&
      this.deps.run.toolset.policies[entry.tool]?.onUnknown === "park"
    ) {
      const decision = await this.context.park(entry, "outcomeUnknown", { message: outcome.error.message });
      if (!decision.approved)
        return {
          ok: false,
          error: { ...outcome.error, message: `${outcome.error.message} (failed by the harness: ${decision.reason})` },
        };
      if (decision.resolved) return { ok: true, value: decision.resolved.value };
      const sent = entry.attempts;
      journal.sendingAgain(entry.seq);
      outcome = await this.attempt(entry);
      journal.attempted(entry.seq, entry.attempts + sent);
    }
    return outcome;
  }

  /** Dispatches the call once, and journals the attempts it took and whose credentials it used. */
  private async attempt(entry: JournalEntry): Promise<CallOutcome> {
    const outcome = await dispatchCall(entry, this.context);
    if (outcome.attempts !== undefined) this.deps.journal.attempted(entry.seq, outcome.attempts, outcome.credentials);
    return outcome;
  }

  /** Sends one call and journals its outcome; `release` frees its place in the limits. */
  private async perform(entry: JournalEntry, release: () => void): Promise<void> {
    const { run, journal, speculative, observations } = this.deps;
    journal.sending(entry.seq, Date.now());
    this.deps.status.touch();
    let outcome;
    try {
      outcome = await this.send(entry);
    } catch (error) {
      // Only the run's own cancellation gets here; the run loop sees it too and ends the run.
      if (isCancellation(error)) return;
      throw error;
    } finally {
      release();
      this.deps.reports.callEnded(entry.seq);
    }
    journal.complete(entry.seq, outcome, Date.now());
    this.finished(entry.seq);
    if (WAITING_BUILTINS.has(entry.tool)) this.waits += 1;
    reportCallSpan(run, entry, run.toolset.policies[entry.tool]);
    if (outcome.ok) observations.record(entry.tool, outcome.value);
    if (outcome.ok && outcome.step) speculative.consider(entry.seq, outcome.step, this.draining);
    else speculative.feed(entry.seq);
  }
}
