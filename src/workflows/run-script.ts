/**
 * The run workflow: alternate between advancing the script in the sandbox and dispatching the
 * calls it issued, feeding completions back in the order they happened. Determinism rests on
 * the journal: the script's only inputs are the run input and the batches of completions, each
 * with the workflow time at which it was fed. Before history grows too long, the run drains its
 * tool calls and continues as new, carrying the journal.
 */
import {
  ApplicationFailure, condition, continueAsNew, isCancellation, patched, proxyLocalActivities, setHandler, upsertSearchAttributes, workflowInfo,
} from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";
import type { CredentialRef } from "../shared/credentials.ts";
import type { JournalEntry } from "../shared/journal.ts";
import { RUN_FAILURE_TYPES, SEARCH_ATTRIBUTES, type RunInput, type RunState } from "../shared/run.ts";
import type { AdvanceInput, AdvanceResult, ScriptError } from "../shared/step.ts";
import { RUN_CONCURRENCY } from "../shared/tool-call.ts";
import { CallScheduler } from "./call-scheduler.ts";
import { reportCallSpan, reportRunSpan } from "./call-spans.ts";
import { ForkReplay } from "./fork-seed.ts";
import { Observations } from "./observations.ts";
import { tellParent } from "./child-runs.ts";
import { dispatchCall, isBuiltin } from "./dispatch.ts";
import { JournalBook } from "./journal-book.ts";
import { emitEvent } from "./events.ts";
import {
  approveCallUpdate, credentialsRenewedSignal, deliverSignal, getJournalQuery, getStatusQuery, rejectCallUpdate, resumeCallUpdate,
} from "./messages.ts";
import { ParkingLot, type Decision, type ParkDetails, type ParkReason } from "./parking.ts";
import { ReadyQueue } from "./ready-queue.ts";
import { PATCHES } from "./patches.ts";
import { TakenSteps } from "./taken-steps.ts";
import { SignalInbox } from "./signal-inbox.ts";

const { advanceScript } = proxyLocalActivities<Activities>({
  startToCloseTimeout: "5 minutes",
  retry: { maximumAttempts: 3, initialInterval: "200ms" },
});

function scriptFailure(error: ScriptError): ApplicationFailure {
  const type = error.limit ? RUN_FAILURE_TYPES.limitExceeded : RUN_FAILURE_TYPES.scriptFailed;
  const where = error.code ? `${error.name}(${error.code}) from ${error.tool} (seq ${error.seq}): ` : `${error.name}: `;
  return ApplicationFailure.create({ type, message: where + error.message, details: [error], nonRetryable: true });
}

function shouldContinueAsNew(afterEvents: number | undefined): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || (afterEvents !== undefined && info.historyLength >= afterEvents);
}

export async function runScript(input: RunInput): Promise<unknown> {
  const journal = new JournalBook(input.carried);
  const inbox = new SignalInbox(input.carried?.signals);
  const startedAt = input.carried?.startedAt ?? Date.now();
  const ready = new ReadyQueue(input.carried?.unfed);
  const holdsEarlySteps = (): boolean => !patched(PATCHES.stepsUsedOnlyInOrder);
  const taken = new TakenSteps(journal, ready, holdsEarlySteps);
  let builtinsInFlight = 0;
  let draining = false;
  const observations = new Observations(input.namespace, input.toolsetId, input.toolset);
  let state: RunState = "running";
  const parking = new ParkingLot();
  const credentials: CredentialRef = {
    namespace: input.namespace, toolsetId: input.toolsetId, notBefore: startedAt,
    ...(input.endUser ? { endUser: input.endUser } : {}), ...(input.credentials ? { runSealed: input.credentials } : {}),
  };
  let parkings = 0;
  /** Parks a call, tells the harness why, and waits for its decision. */
  const park = async (entry: JournalEntry, reason: ParkReason, details: ParkDetails = {}, announce = true): Promise<Decision> => {
    const decided = parking.park(entry, reason, details);
    // A run cancelled while it announces the parking never awaits the decision: handle it here.
    decided.catch(() => undefined);
    setState("parked");
    parkings += 1;
    if (announce) await announceParking(entry, reason, details, parkings);
    const decision = await decided;
    if (parking.size === 0) setState("running");
    return decision;
  };
  const context = { runId: input.runId, trace: input.trace, toolset: input.toolset, inbox, run: input, credentials, park: (entry: JournalEntry, reason: ParkReason, details: ParkDetails) => park(entry, reason, details) };

  /** Sends one call and journals its outcome; `release` frees its place in the limits. */
  const perform = async (entry: JournalEntry, release: () => void): Promise<void> => {
    entry.status = "running";
    entry.startedAt ??= Date.now();
    entry.attempts = Math.max(entry.attempts, 1);
    let outcome;
    try {
      outcome = await dispatchCall(entry, context);
    } catch (error) {
      // Only the run's own cancellation gets here; the main loop sees it too and ends the run.
      if (isCancellation(error)) return;
      throw error;
    } finally {
      release();
    }
    journal.complete(entry.seq, outcome, Date.now());
    reportCallSpan(input.trace, entry, input.toolset.policies[entry.tool]);
    if (outcome.ok) observations.record(entry.tool, outcome.value);
    if (outcome.ok && outcome.step) taken.offer(entry.seq, outcome.step, draining);
    else taken.feed(entry.seq);
  };
  const scheduler = new CallScheduler(RUN_CONCURRENCY, (tool) => input.toolset.policies[tool]?.concurrency ?? RUN_CONCURRENCY, (entry, release) => void perform(entry, release));
  const inFlight = () => scheduler.inFlight + scheduler.queued + builtinsInFlight + parking.size;

  setHandler(getStatusQuery, () => ({ state, calls: { total: journal.callCount, inFlight: inFlight() }, parked: parking.list() }));
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
  const forkReplay = new ForkReplay(input.fork);
  setHandler(getJournalQuery, (options) => {
    const fork = forkReplay.view();
    const full = options?.withBatches ? { startedAt, batches: journal.batches } : {};
    return { ...journal.view(options?.afterSeq, options?.limit), ...(fork ? { fork } : {}), ...full };
  });
  setHandler(deliverSignal, ({ name, payload }) => {
    // A run that started before PATCHES.stepsUsedOnlyInOrder and stalled on a held step is woken by any signal.
    if (taken.heldCount > 0 && !holdsEarlySteps()) taken.release();
    inbox.deliver(name, payload);
  });

  const setState = (next: RunState): void => {
    state = next;
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.status, value: next }]);
  };

  const emit = (type: Parameters<typeof emitEvent>[2], data: Record<string, unknown>, discriminator?: number | string) =>
    emitEvent(input.namespace, input.runId, type, data, discriminator);

  /** Parks a call that needs approval (outside the concurrency limits), then sends or rejects it. */
  const announceParking = async (entry: JournalEntry, reason: ParkReason, details: ParkDetails, nth: number): Promise<void> => {
    const call = { seq: entry.seq, tool: entry.tool };
    if (reason === "approval") await emit("call.approval_requested", { ...call, args: entry.args }, entry.seq);
    else if (reason === "schemaChanged") await emit("tool.schema_changed", { ...call, pinned: details["pinned"] ?? null, current: details["current"] ?? null }, `${entry.seq}-${nth}`);
    else await emit("credentials.expired", { ...call, reason, scope: details.scope ?? null, ...(details["scopeAsked"] ? { scopeAsked: details["scopeAsked"] } : {}), ...(input.endUser ? { endUser: input.endUser } : {}) }, `${entry.seq}-${nth}`);
  };

  const approveThenDispatch = async (entry: JournalEntry): Promise<void> => {
    // A call carried over by continue-as-new already announced itself.
    const decision = await park(entry, "approval", {}, entry.status !== "parked");
    if (decision.approved) {
      entry.approved = true;
      entry.status = "pending";
      scheduler.enqueue(entry);
      return;
    }
    journal.complete(entry.seq, { ok: false, error: { code: "rejected", message: `${entry.tool}: ${decision.reason}`, tool: entry.tool, seq: entry.seq } }, Date.now());
    taken.feed(entry.seq);
  };

  const dispatch = (entry: JournalEntry): void => {
    const reused = forkReplay.reuse(entry);
    if (reused) {
      journal.complete(entry.seq, reused, Date.now());
      taken.feed(entry.seq);
      return;
    }
    if (input.toolset.policies[entry.tool]?.approval && !entry.approved) {
      void approveThenDispatch(entry).catch((error: unknown) => { if (!isCancellation(error)) throw error; });
      return;
    }
    if (!isBuiltin(entry.tool)) return scheduler.enqueue(entry);
    builtinsInFlight += 1;
    void perform(entry, () => { builtinsInFlight -= 1; });
  };

  const coldStart = (consumedBatches: number): NonNullable<AdvanceInput["cold"]> => ({
    script: input.script, input: input.input, toolset: input.toolset, startedAt,
    history: journal.history().slice(0, consumedBatches), knownCalls: journal.callCount,
  });

  const step = async (base: Omit<AdvanceInput, "cold">): Promise<AdvanceResult> => {
    const warm = await advanceScript(base);
    if (warm.kind !== "needsColdStart") return warm;
    const result = await advanceScript({ ...base, cold: coldStart(base.consumedBatches) });
    if (result.kind === "needsColdStart") throw ApplicationFailure.nonRetryable("the sandbox refused a cold start");
    return result;
  };

  let outcome: AdvanceResult;
  if (input.carried) {
    // A continued run: what was in flight when the last one drained is sent again, same seqs.
    journal.unfinished().forEach(dispatch);
    outcome = { kind: "waiting", calls: [], logs: [] };
  } else {
    outcome = await advanceScript({ runId: input.runId, namespace: input.namespace, consumedBatches: 0, chain: journal.chain, batches: [], cold: coldStart(0) });
  }

  for (;;) {
    if (outcome.kind === "needsColdStart") throw ApplicationFailure.nonRetryable("the sandbox refused a cold start");
    for (const call of outcome.calls) {
      const entry = journal.record(call, Date.now());
      if (!call.refused) dispatch(entry);
    }
    if (outcome.kind !== "waiting") await observations.flush();
    if (outcome.kind === "done") {
      setState("completed");
      reportRunSpan(input.trace, input.runId, startedAt, "completed", journal.callCount);
      if (outcome.eventsEndpoint !== false) await emit("run.completed", { result: outcome.result });
      await tellParent(input, { ok: true, value: outcome.result });
      return outcome.result;
    }
    if (outcome.kind === "failed") {
      setState("failed");
      const failure = scriptFailure(outcome.error);
      reportRunSpan(input.trace, input.runId, startedAt, "failed", journal.callCount);
      if (outcome.eventsEndpoint !== false) await emit("run.failed", { error: { type: failure.type, message: failure.message } });
      await tellParent(input, { ok: false, message: failure.message });
      throw failure;
    }
    // A held step waits for a call in flight; with none left, its call is fed the ordinary way.
    if (inFlight() === 0 && taken.heldCount > 0) taken.release();
    if (inFlight() === 0 && ready.length === 0) {
      setState("failed");
      const message = "the script is waiting for a promise that nothing will settle (no call is in flight)";
      await emit("run.failed", { error: { type: RUN_FAILURE_TYPES.stuck, message } });
      await tellParent(input, { ok: false, message });
      throw ApplicationFailure.create({ type: RUN_FAILURE_TYPES.stuck, nonRetryable: true, message });
    }
    // Steps already taken are used first: their batches are in the journal, their calls not yet.
    if (ready.length === ready.unfed && shouldContinueAsNew(input.continueAsNewAfterEvents)) {
      draining = true;
      taken.release();
      scheduler.pause();
      await observations.flush();
      await condition(() => scheduler.inFlight === 0);
      await continueAsNew<typeof runScript>({ ...input, carried: journal.carry(startedAt, inbox.snapshot(), ready.snapshot()) });
    }
    const next = await ready.next();
    if (next.kind === "taken") {
      outcome = next.result;
      continue;
    }
    const consumedBatches = journal.batches.length;
    const chain = journal.chain;
    const batch = journal.addBatch(Math.max(Date.now(), journal.lastAt), next.seqs);
    outcome = await step({ runId: input.runId, namespace: input.namespace, consumedBatches, chain, batches: [batch] });
  }
}
