/**
 * The contract of one `advance` step: what the workflow sends to the sandbox and what comes
 * back. Warm steps carry only the batches the isolate has not seen; a cold step carries the
 * whole script, toolset and history, and is asked for only when the warm isolate is gone.
 */
import type { EventBatch, IssuedCall } from "./journal.ts";
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
}

export interface AdvanceInput {
  runId: string;
  /** The run's namespace: a step that ends the run says whether it takes events. */
  namespace?: string;
  /** Batches already consumed by the isolate this step expects to find warm. */
  consumedBatches: number;
  /** New batches to feed, oldest first. */
  batches: EventBatch[];
  /** Present on the first step and when a warm isolate was missing. */
  cold?: ColdStart;
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
  | { kind: "waiting"; calls: IssuedCall[]; logs: string[] }
  | ({ kind: "done"; result: unknown; calls: IssuedCall[]; logs: string[] } & RunEnd)
  | ({ kind: "failed"; error: ScriptError; calls: IssuedCall[]; logs: string[] } & RunEnd);

/** Told with the step that ends a run. */
export interface RunEnd {
  /**
   * false when the namespace had no events endpoint as the run ended, so announcing the end
   * would start a delivery workflow only to drop the event; absent when it is not known.
   */
  eventsEndpoint?: boolean;
}
