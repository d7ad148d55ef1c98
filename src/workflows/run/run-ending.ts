/**
 * The one way a run ends, whichever way it ends: completed, failed (the script threw, hit a
 * limit, or waits for something nothing will settle), cancelled, or drained to continue as new.
 * Each end flushes the run's observations, sets `RewindStatus`, reports the run's span, emits
 * its event, tells a waiting parent, and then returns, throws or continues as new.
 *
 * Command order is part of every recorded history: completed and failed runs keep the order
 * they had in 3477167; what a stuck or cancelled run does beyond it is behind
 * `PATCHES.oneWayToEnd`, so runs that ended that way before replay as they ran. Since
 * `PATCHES.observationsSentBeforeEnd` the flush also waits for every shape's signal still on its
 * way, and a run continuing as new flushes once its calls are no longer being sent. Since
 * `PATCHES.statusAfterEveryEnd` a run that fails on an error of its own ends the same way
 * (`broken`), so no end leaves `RewindStatus` at running or parked; since
 * `PATCHES.typedRunFailures` it fails typed RunBroken, like every other failure typed from
 * RUN_FAILURE_TYPES.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  type TemporalFailure,
} from "@temporalio/workflow";
import {
  runCancelled,
  runCompleted,
  runFailed,
  runRolledBack,
  RUN_FAILURE_TYPES,
  runtimeVersionOf,
  shapeOf,
  shapeText,
  type CarriedJournal,
  type RunInput,
} from "../../shared/index.ts";
import type { Decider, EventData, EventType, JournalEntry, RollbackSummary, ScriptError } from "../../shared/index.ts";
import { reportRunSpan } from "./call-spans.ts";
import { tellParent, type ChildEnding, type ChildRuns } from "./child-runs.ts";
import { emitEvent } from "./events.ts";
import type { Observations } from "./observations.ts";
import { PATCHES } from "./patches.ts";
import { isPatched } from "./run-patches.ts";
import type { RunStatus } from "./run-status.ts";

export type RunEnd =
  | { kind: "completed"; result: unknown; eventsEndpoint?: boolean | undefined }
  | { kind: "failed"; error: ScriptError; eventsEndpoint?: boolean | undefined }
  | { kind: "stuck" }
  | { kind: "cancelled"; cause: unknown }
  /** The harness rejected the script before its first step (ScriptApproval): it never ran. */
  | { kind: "rejected"; reason: string; decidedBy?: Decider | undefined }
  /** Rolled back (Rollback): the workflow completes, with the rollback as its result. */
  | { kind: "rolledBack"; summary: RollbackSummary }
  /** The workflow itself failed (the sandbox refused a cold start, a step's activity failed past its retries). */
  | { kind: "broken"; failure: TemporalFailure };

export interface RunEndingDeps {
  run: RunInput;
  /** When the script started (its clock's origin), as recorded with its first step. */
  startedAt(): number;
  status: RunStatus;
  observations: Observations;
  children: ChildRuns;
  callCount(): number;
  /** Calls issued and not finished (pending, running or parked), for run.cancelled. */
  unfinished(): EventData["run.cancelled"]["unfinished"];
  /** The call whose outcome the script received last, if any. */
  lastReceived?(): JournalEntry | undefined;
}

/**
 * What a failed script was handling: the call whose outcome it received last and that outcome's
 * shape (keys and JSON types, never values), for runs of sandbox runtime 4 on. A model reading
 * `TypeError: … reading 'name'` then sees that the last result was `{ items: … }`.
 */
function lastReceivedOf(
  deps: RunEndingDeps,
):
  | { seq: number; tool: string; outcome: "result"; shape: Record<string, unknown> }
  | { seq: number; tool: string; outcome: "error"; code: string }
  | undefined {
  if (runtimeVersionOf(deps.run) < 4) return undefined;
  const entry = deps.lastReceived?.();
  if (!entry) return undefined;
  if (entry.error) return { seq: entry.seq, tool: entry.tool, outcome: "error", code: entry.error.code };
  return { seq: entry.seq, tool: entry.tool, outcome: "result", shape: shapeOf(entry.result, { records: true }) };
}

const STUCK_MESSAGE = "the script is waiting for a promise that nothing will settle (no call is in flight)";

/** Why a stuck script failed, as a rollback under onFailure records it. */
export const STUCK = { type: RUN_FAILURE_TYPES.stuck, message: STUCK_MESSAGE };

export function scriptFailure(error: ScriptError, context = "", lastReceived?: object): ApplicationFailure {
  const type = error.limit ? RUN_FAILURE_TYPES.limitExceeded : RUN_FAILURE_TYPES.scriptFailed;
  const where = error.code ? `${error.name}(${error.code}) from ${error.tool} (seq ${error.seq}): ` : `${error.name}: `;
  return ApplicationFailure.create({
    type,
    message: where + error.message + context,
    details: [lastReceived ? { ...error, lastReceived } : error],
    nonRetryable: true,
  });
}

/** What a run's own error says, through the activity it came from: "advanceScript: …". */
function brokenMessage(failure: TemporalFailure): string {
  const cause = failure instanceof ActivityFailure ? failure.cause : undefined;
  return failure instanceof ActivityFailure && cause ? `${failure.activityType}: ${cause.message}` : failure.message;
}

export class RunEnding {
  /** Set once an end began: what it throws is the run's end, not a new failure to announce. */
  begun = false;
  private readonly deps: RunEndingDeps;

  constructor(deps: RunEndingDeps) {
    this.deps = deps;
  }

  /** Ends the run: answers its result, or throws what Temporal records as its failure or cancellation. */
  async end(end: RunEnd): Promise<unknown> {
    this.begun = true;
    switch (end.kind) {
      case "completed":
        await this.deps.observations.flush();
        await this.announce(
          "completed",
          "run.completed",
          runCompleted(end.result),
          { ok: true, value: end.result },
          end.eventsEndpoint,
        );
        return end.result;
      case "failed": {
        const last = lastReceivedOf(this.deps);
        const failure = scriptFailure(
          end.error,
          last &&
            (last.outcome === "result"
              ? `; the last call it received was ${last.tool} (seq ${last.seq}), which returned ${shapeText(last.shape)}`
              : `; the last call it received was ${last.tool} (seq ${last.seq}), which failed ${last.code}`),
          last,
        );
        await this.deps.observations.flush();
        const error = { type: failure.type ?? RUN_FAILURE_TYPES.scriptFailed, message: failure.message };
        await this.announce(
          "failed",
          "run.failed",
          runFailed(error),
          { ok: false, status: "failed", message: failure.message, error },
          end.eventsEndpoint,
        );
        throw failure;
      }
      case "broken": {
        // Only since PATCHES.statusAfterEveryEnd: the caller asks it first.
        const typed = isPatched(PATCHES.typedRunFailures);
        const error = typed
          ? { type: RUN_FAILURE_TYPES.broken, message: brokenMessage(end.failure) }
          : {
              type:
                end.failure instanceof ApplicationFailure ? (end.failure.type ?? end.failure.name) : end.failure.name,
              message: end.failure.message,
            };
        await this.announce("failed", "run.failed", runFailed(error), {
          ok: false,
          status: "failed",
          message: typed ? error.message : end.failure.message,
          error,
        });
        if (typed) throw ApplicationFailure.create({ ...error, nonRetryable: true, cause: end.failure });
        throw end.failure;
      }
      case "stuck": {
        const error = { type: RUN_FAILURE_TYPES.stuck, message: STUCK_MESSAGE };
        const failure = ApplicationFailure.create({ ...error, nonRetryable: true });
        if (isPatched(PATCHES.oneWayToEnd)) {
          await this.deps.observations.flush();
          await this.announce("failed", "run.failed", runFailed(error), {
            ok: false,
            status: "failed",
            message: STUCK_MESSAGE,
            error,
          });
        } else {
          // As 3477167 ended a stuck run: no flush, no span.
          this.deps.status.set("failed");
          await emitEvent(this.deps.run, "run.failed", runFailed(error));
          await tellParent(this.deps.run, { ok: false, message: STUCK_MESSAGE });
        }
        throw failure;
      }
      case "rolledBack": {
        const { reverted, notReverted } = end.summary;
        await this.deps.observations.flush();
        await this.announce("rolledBack", "run.rolled_back", runRolledBack(end.summary), {
          ok: false,
          status: "failed",
          message: `the run was rolled back (${reverted.length} reverted, ${notReverted.length} not reverted)`,
        });
        return end.summary;
      }
      case "rejected": {
        // Only runs that asked for their script's approval get here: no earlier history does.
        const error = {
          type: RUN_FAILURE_TYPES.scriptRejected,
          message: `the harness rejected the script: ${end.reason}`,
        };
        await this.announce("failed", "run.failed", runFailed(error), {
          ok: false,
          status: "failed",
          message: error.message,
          error,
        });
        const details = { reason: end.reason, ...(end.decidedBy ? { decidedBy: end.decidedBy } : {}) };
        throw ApplicationFailure.create({ ...error, details: [details], nonRetryable: true });
      }
      case "cancelled":
        // Runs cancelled before the patch ended without a word; their histories say so.
        if (!isPatched(PATCHES.oneWayToEnd)) throw end.cause;
        await CancellationScope.nonCancellable(async () => {
          await this.deps.observations.flush();
          await this.announce("cancelled", "run.cancelled", runCancelled(this.deps.unfinished()), {
            ok: false,
            status: "cancelled",
            message: "the run was cancelled",
          });
          await this.deps.children.cancelAwaited();
        });
        throw end.cause;
    }
  }

  /** Drains the run and continues as new with what `carry` gives once no call is being sent. */
  async continueAsNew(drain: { pause(): void; readonly sending: number }, carry: () => CarriedJournal): Promise<never> {
    drain.pause();
    if (isPatched(PATCHES.observationsSentBeforeEnd)) {
      // Observations last: a call still being sent reports its result's shape when it ends.
      await condition(() => drain.sending === 0);
      await this.deps.observations.flush();
    } else {
      await this.deps.observations.flush();
      await condition(() => drain.sending === 0);
    }
    // The first step was taken long ago: the next execution starts from the carried journal.
    // Its input only, which Temporal's determinism check does not compare: no patch.
    const { firstStep: _taken, ...run } = this.deps.run;
    return continueAsNew<(input: RunInput) => Promise<unknown>>({ ...run, carried: carry() });
  }

  private async announce<T extends EventType>(
    state: "completed" | "failed" | "cancelled" | "rolledBack",
    type: T,
    data: EventData[T],
    ending: ChildEnding,
    eventsEndpoint?: boolean,
  ): Promise<void> {
    const { run, startedAt, status } = this.deps;
    status.set(state, "error" in data && isError(data.error) ? data.error.message : undefined);
    reportRunSpan(run.trace, run.runId, startedAt(), state, this.deps.callCount());
    if (eventsEndpoint !== false) await emitEvent(run, type, data);
    await tellParent(run, ending);
  }
}

const isError = (value: unknown): value is { message: string } =>
  typeof value === "object" && value !== null && typeof (value as { message?: unknown }).message === "string";
