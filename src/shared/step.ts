/**
 * The contract of one `advance` step: what the workflow sends to the sandbox and what comes
 * back. Warm steps carry only the batches the isolate has not seen; a cold step carries the
 * whole script, toolset and history, and is asked for only when the warm isolate is gone.
 */
import { fnv64 } from "./fnv.ts";
import type { EventBatch, IssuedCall } from "./journal.ts";
import type { CredentialRef } from "./credentials.ts";
import type { RunInput } from "./run.ts";
import type { PinnedToolset } from "./toolset.ts";

export interface ColdStart {
  script: string;
  input: unknown;
  toolset: PinnedToolset;
  /** Workflow time of the run's first step. */
  startedAt: number;
  /** Every batch fed so far, oldest first. */
  history: EventBatch[];
  /** How many calls the workflow already knows of; replayed calls up to it are not new. */
  knownCalls: number;
  /** The sandbox runtime the run started on (absent: 1); a worker that lacks it refuses the step. */
  runtimeVersion?: number;
}

export interface AdvanceInput {
  runId: string;
  /** The run's namespace: a step that ends the run says whether it takes events. */
  namespace?: string;
  /** Batches already consumed by the isolate this step expects to find warm. */
  consumedBatches: number;
  /** `batchChain` of those batches: when given, a warm isolate fed anything else is not used. */
  chain?: string;
  /** New batches to feed, oldest first. */
  batches: EventBatch[];
  /** Present on the first step and when a warm isolate was missing. */
  cold?: ColdStart;
  /**
   * The run's credentials, on its first step: the worker starts opening the MCP sessions of the
   * calls the step issues while the workflow task completes. Activity input only (no command
   * changes), so runs of any release replay with or without it.
   */
  openSessionsWith?: CredentialRef;
}

export interface ScriptError {
  name: string;
  message: string;
  /** Stack with positions in the script as written (`script.ts:line:column`). */
  stack?: string;
  /** Set when the error is an uncaught ToolError. */
  code?: string;
  tool?: string;
  seq?: number;
  /** Set when a sandbox limit ended the step. */
  limit?: "cpu" | "memory" | "calls";
}

export type AdvanceResult =
  | { kind: "needsColdStart" }
  | ({ kind: "waiting"; calls: IssuedCall[]; logs: string[] } & StepClock)
  | ({ kind: "done"; result: unknown; calls: IssuedCall[]; logs: string[] } & RunEnd & StepClock)
  | ({ kind: "failed"; error: ScriptError; calls: IssuedCall[]; logs: string[] } & RunEnd & StepClock);

/**
 * The times a step was fed, echoed by the sandbox so they are recorded in history with the
 * step's result. The workflow computes them from its clock before the step; on replay it takes
 * them from here, because the clock of an activation replayed after a timed-out workflow task
 * is not always the one the original activation had, and the journal's chain hashes them.
 */
export interface StepClock {
  /** The time of the last batch fed in this step. */
  fedAt?: number;
  /** The script's start time, on the step that started it (cold). */
  startedAt?: number;
}

/** What a step that ran reports: every result but the request for a cold start. */
export type StepResult = Exclude<AdvanceResult, { kind: "needsColdStart" }>;

/** Told with the step that ends a run. */
export interface RunEnd {
  /**
   * false when the namespace had no events endpoint as the run ended, so announcing the end
   * would start a delivery workflow only to drop the event; absent when it is not known.
   */
  eventsEndpoint?: boolean;
}

/** The chain of a script that has been fed nothing yet. */
export const EMPTY_CHAIN = "0000000000000000";

/**
 * The first step of a new run, fed nothing: what the run takes in a local activity, and what the
 * API beside a worker takes for it before starting it (`RunInput.firstStep`). `credentials`: the
 * run's, so the worker opens the sessions of the calls the step issues.
 */
export function firstStepInput(
  run: Pick<RunInput, "runId" | "namespace" | "script" | "input" | "toolset" | "runtimeVersion">,
  startedAt: number,
  credentials: CredentialRef,
): AdvanceInput {
  return {
    runId: run.runId,
    namespace: run.namespace,
    consumedBatches: 0,
    chain: EMPTY_CHAIN,
    batches: [],
    cold: {
      script: run.script,
      input: run.input,
      toolset: run.toolset,
      startedAt,
      history: [],
      knownCalls: 0,
      ...(run.runtimeVersion === undefined ? {} : { runtimeVersion: run.runtimeVersion }),
    },
    openSessionsWith: credentials,
  };
}

/**
 * Identifies everything a script has been fed: each batch (its time and seqs) hashed onto the
 * chain before it. The workflow keeps the chain of its journal and a warm isolate the chain of
 * what it was fed, so a speculative step taken on one can be checked against the other.
 */
export function batchChain(previous: string, at: number, seqs: readonly number[]): string {
  return fnv64(`${previous}/${at}:${seqs.join(",")}`);
}

/**
 * A speculative step: the step the worker that finished a call took right after the call, on
 * the run's warm isolate, with the call's completion fed alone at `at` on top of what the
 * isolate had been fed (`chain`). It travels with the call's result (`ToolCallResult.step`). The
 * workflow adopts it as its next step when its journal has that same chain and nothing else
 * waits to be fed, and saves a local activity; defers it while the call it follows (`after`) is
 * unfinished; otherwise discards it and feeds the call itself (`SpeculativeSteps`).
 *
 * Part of an activity's result: its fields are wire names (kept: stored in histories).
 */
export interface SpeculativeStep {
  chain: string;
  /**
   * Seqs of the batch the isolate was fed just before this step. When that was one call fed by
   * a speculative step too, this step can be adopted only after that call's step: the workflow
   * defers it while that call is unfinished (or deferred), never longer. Absent from older
   * workers' steps.
   */
  after?: number[];
  at: number;
  result: StepResult;
}
