/**
 * The run workflow: alternate between advancing the script in the sandbox and dispatching the
 * calls it issued, feeding completions back in the order they happened. Determinism rests on
 * the journal: the script's only inputs are the run input and the batches of completions, each
 * with the workflow time at which it was fed. Before history grows too long, the run drains its
 * tool calls and continues as new, carrying the journal. Sending calls is CallRunner's, parking
 * ParkingDesk's, answering the harness RunHandlers', what calls report while in flight
 * CallReportDesk's, and every end of a run RunEnding's.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  TemporalFailure,
  isCancellation,
  proxyLocalActivities,
  workflowInfo,
} from "@temporalio/workflow";
import type { Activities } from "../../activities/index.ts";
import { RUNTIME_VERSION_ERROR_TYPE, describeRunStart, firstStepInput, runCredentialRef } from "../../shared/index.ts";
import type { CredentialRef, RunInput, AdvanceInput, AdvanceResult } from "../../shared/index.ts";
import { CallReportDesk, registerCallReportHandlers } from "./call-report-desk.ts";
import { CallRunner } from "./call-runner.ts";
import { reportRunStarted } from "./call-spans.ts";
import { ChildRuns } from "./child-runs.ts";
import { ForkReplay } from "./fork-seed.ts";
import { JournalBook } from "./journal-book.ts";
import { Observations } from "./observations.ts";
import { ParkingDesk } from "./parking-desk.ts";
import { announcePatches, isPatched } from "./run-patches.ts";
import { PATCHES } from "./patches.ts";
import { ReadyQueue } from "./ready-queue.ts";
import { RunEnding, STUCK, scriptFailure } from "./run-ending.ts";
import { registerRunHandlers } from "./run-handlers.ts";
import { Rollback } from "./rollback.ts";
import { RunStatus } from "./run-status.ts";
import { ScriptApproval } from "./script-approval.ts";
import { SignalInbox } from "./signal-inbox.ts";
import { SpeculativeSteps } from "./speculative-steps.ts";

const { advanceScript: advanceOnThisWorker } = proxyLocalActivities<Activities>({
  startToCloseTimeout: "5 minutes",
  retry: { maximumAttempts: 3, initialInterval: "200ms", nonRetryableErrorTypes: [RUNTIME_VERSION_ERROR_TYPE] },
});

/**
 * A step in the sandbox of the worker running the workflow task. A worker without the run's
 * sandbox runtime (a run of a newer release, on an older worker) fails the workflow task
 * rather than the run, so Temporal retries it until a worker that has the runtime takes it.
 */
async function advanceScript(input: AdvanceInput): Promise<AdvanceResult> {
  try {
    return await advanceOnThisWorker(input);
  } catch (error) {
    if (
      error instanceof ActivityFailure &&
      error.cause instanceof ApplicationFailure &&
      error.cause.type === RUNTIME_VERSION_ERROR_TYPE
    )
      throw new Error(error.cause.message);
    throw error;
  }
}

function shouldContinueAsNew(afterEvents: number | undefined): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || (afterEvents !== undefined && info.historyLength >= afterEvents);
}

export async function runScript(input: RunInput): Promise<unknown> {
  announcePatches();
  // Asked once, at the start: a run that started before these releases keeps the shared queue
  // and sends its observations itself to its end, so no marker of theirs can follow a local
  // activity's result in a replay.
  const followsSessions = isPatched(PATCHES.callsFollowTheirSession);
  const observesBySink = isPatched(PATCHES.observationsBySink);
  const journal = new JournalBook(input.carried);
  const inbox = new SignalInbox(input.carried?.signals);
  let startedAt = input.carried?.startedAt ?? Date.now();
  const ready = new ReadyQueue(input.carried?.unfed);
  const defersWhileChainMayCome = (): boolean => !isPatched(PATCHES.deferredStepsWaitOnlyForCallsInFlight);
  const speculative = new SpeculativeSteps(journal, ready, defersWhileChainMayCome);
  const observations = new Observations(input.namespace, input.toolsetId, input.toolset, observesBySink);
  const status = new RunStatus();
  const parking = new ParkingDesk(input, status);
  const children = new ChildRuns();
  const forkReplay = new ForkReplay(input.fork);
  // Activity input only: no command changes, so no patch.
  const credentials: CredentialRef = runCredentialRef(input, startedAt);
  const reports = new CallReportDesk({ run: input, namespace: input.namespace, journal, parking, status });
  const calls = new CallRunner({
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
  });
  status.describeFrom(
    () => ({ parked: parking.lot.list(), inFlight: calls.active }),
    input.carried ? describeRunStart(input).staticSummary : undefined,
  );
  const ending = new RunEnding({
    run: input,
    startedAt: () => startedAt,
    status,
    observations,
    children,
    callCount: () => journal.callCount,
    unfinished: () =>
      journal.unfinished().map(({ seq, tool, status }) => ({
        seq,
        tool,
        status: status === "parked" || status === "running" ? status : "pending",
      })),
  });
  // Reachable only through the rollbackRun update, onFailure or revert policies, which no earlier history holds.
  const rollback = new Rollback(
    {
      run: input,
      journal,
      calls,
      parking: parking.lot,
      wakeLoop: () => ready.nudge(),
      ending: () => ending.begun,
    },
    input.carried?.rollback,
  );
  rollback.register();
  /** Rolls the run back (`trigger`: the script failed under onFailure) and ends it rolledBack. */
  const rollBack = async (trigger?: Parameters<Rollback["begin"]>[0]): Promise<unknown> => {
    if (trigger) rollback.begin(trigger);
    return ending.end({ kind: "rolledBack", summary: await rollback.perform() });
  };
  const rollsBackOnFailure = input.onFailure === "rollback";
  const scriptApproval = new ScriptApproval(input, status);
  scriptApproval.register();
  registerRunHandlers({
    scriptApproval: () => scriptApproval.view,
    rollback: () => rollback.view,
    startedAt: () => startedAt,
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
    // A run that started before PATCHES.deferredStepsWaitOnlyForCallsInFlight and stalled on a deferred step is woken by any signal.
    beforeSignal: () => {
      if (speculative.deferredCount > 0 && !defersWhileChainMayCome()) speculative.discardDeferred();
    },
  });
  registerCallReportHandlers(reports);
  // The run's root span goes out as it starts (a sink: no command), so its spans have their parent while it is open.
  if (!input.carried) reportRunStarted(input);

  const coldStart = (consumedBatches: number): NonNullable<AdvanceInput["cold"]> => ({
    script: input.script,
    input: input.input,
    toolset: input.toolset,
    startedAt,
    history: journal.history().slice(0, consumedBatches),
    knownCalls: journal.callCount,
    ...(input.runtimeVersion === undefined ? {} : { runtimeVersion: input.runtimeVersion }),
  });

  /** One step in the sandbox through a local activity: warm if this worker has the isolate, else cold. */
  const step = async (base: Omit<AdvanceInput, "cold">): Promise<AdvanceResult> => {
    const warm = await advanceScript(base);
    if (warm.kind !== "needsColdStart") return warm;
    const result = await advanceScript({ ...base, cold: coldStart(base.consumedBatches) });
    if (result.kind === "needsColdStart") throw ApplicationFailure.nonRetryable("the sandbox refused a cold start");
    return result;
  };

  /** Advances the script until it ends; answers how. */
  const runLoop = async (): Promise<unknown> => {
    let outcome: AdvanceResult;
    if (input.carried) {
      // A continued run: what was in flight when the last one drained is sent again, same seqs.
      if (!rollback.requested) journal.unfinished().forEach((entry) => calls.dispatch(entry));
      outcome = { kind: "waiting", calls: [], logs: [] };
    } else {
      // Only a run that asked for it (input no earlier run holds: see ScriptApproval) waits here.
      if (scriptApproval.required) {
        const decision = await scriptApproval.wait();
        if (!decision.approved)
          return ending.end({ kind: "rejected", reason: decision.reason, decidedBy: decision.decidedBy });
      }
      // A step carried in the input was taken beside the API, which left the run's isolate warm there.
      outcome =
        input.firstStep && !scriptApproval.required && isPatched(PATCHES.firstStepCarried)
          ? input.firstStep
          : await advanceScript(firstStepInput(input, startedAt, credentials));
      // The script's clock starts when its first step was taken, as recorded with that step.
      if (
        isPatched(PATCHES.batchTimesRecorded) &&
        outcome.kind !== "needsColdStart" &&
        outcome.startedAt !== undefined
      ) {
        startedAt = outcome.startedAt;
        // Credentials read since then are fresh for the run: a step carried from beside the API
        // was taken before this task, and the read that opened its sessions serves its first calls.
        // Activity input only, and unchanged for a step taken in this task (it started at `startedAt`).
        credentials.notBefore = startedAt;
      }
    }
    for (;;) {
      // Asked for while the script stepped: what that step issued is never recorded nor sent.
      if (rollback.requested) return rollBack();
      if (outcome.kind === "needsColdStart") throw ApplicationFailure.nonRetryable("the sandbox refused a cold start");
      calls.follow(followsSessions ? outcome.sessionQueue : undefined, outcome.calls.length);
      for (const call of outcome.calls) {
        const entry = journal.record(call, Date.now());
        if (!call.refused) calls.dispatch(entry);
      }
      if (outcome.kind === "done")
        return ending.end({ kind: "completed", result: outcome.result, eventsEndpoint: outcome.eventsEndpoint });
      if (outcome.kind === "failed") {
        if (rollsBackOnFailure) {
          const { type, message } = scriptFailure(outcome.error);
          return rollBack({ kind: "scriptFailed", at: Date.now(), error: { type: type ?? "ScriptFailed", message } });
        }
        return ending.end({ kind: "failed", error: outcome.error, eventsEndpoint: outcome.eventsEndpoint });
      }
      // A deferred step waits for a call in flight; with none left, its call is fed the ordinary way.
      if (calls.inFlight === 0 && speculative.deferredCount > 0) speculative.discardDeferred();
      if (calls.inFlight === 0 && ready.length === 0) {
        if (rollsBackOnFailure) return rollBack({ kind: "scriptFailed", at: Date.now(), error: STUCK });
        return ending.end({ kind: "stuck" });
      }
      // Adopted steps go first: their batches are in the journal, their calls not yet.
      if (ready.length === ready.unfed && shouldContinueAsNew(input.continueAsNewAfterEvents)) {
        calls.draining = true;
        speculative.discardDeferred();
        await ending.continueAsNew(calls, () => ({
          ...journal.carry(startedAt, inbox.snapshot(), ready.snapshot()),
          ...rollback.carried,
        }));
      }
      const next = await ready.next();
      if (rollback.requested) return rollBack();
      if (next.kind === "adopted") {
        outcome = next.result;
        continue;
      }
      const consumedBatches = journal.batches.length;
      const chain = journal.chain;
      const at = Math.max(Date.now(), journal.lastAt);
      if (!isPatched(PATCHES.batchTimesRecorded)) {
        const batch = journal.addBatch(at, next.seqs);
        outcome = await step({
          runId: input.runId,
          namespace: input.namespace,
          consumedBatches,
          chain,
          batches: [batch],
        });
        continue;
      }
      speculative.stepping = true;
      try {
        outcome = await step({
          runId: input.runId,
          namespace: input.namespace,
          consumedBatches,
          chain,
          batches: [journal.batchOf(at, next.seqs)],
        });
      } finally {
        speculative.stepping = false;
      }
      journal.addBatch(
        outcome.kind !== "needsColdStart" && outcome.fedAt !== undefined ? outcome.fedAt : at,
        next.seqs,
      );
    }
  };

  try {
    return await runLoop();
  } catch (error) {
    if (isCancellation(error)) return ending.end({ kind: "cancelled", cause: error });
    // A failure that fails the workflow (not its task), raised before any end began: announced as one.
    if (error instanceof TemporalFailure && !ending.begun && isPatched(PATCHES.statusAfterEveryEnd))
      return ending.end({ kind: "broken", failure: error });
    throw error;
  }
}
