/**
 * Runs as the API sees them, on top of the Temporal client: `createRunService` answers the
 * object the routes call (`deps.runs.get(...)`), whose methods take the caller's namespace (all
 * but `currentCredentials`, which its caller asks after `forkSource`). A run belongs to the
 * namespace that started it; asking for another namespace's run looks exactly like asking for a
 * missing one. This file only wires each method to the file that does it, handing every one the
 * same small context (the Temporal client and the run's Web UI link, run-lookup.ts):
 * - run-lookup.ts: finding a run the caller owns (404 otherwise), running (409 otherwise), and
 *   what it started from; every other part starts there;
 * - run-launch.ts: starting a run (`start`);
 * - run-reads.ts: a run's view, its journal, the namespace's runs, what it says it waits for,
 *   cancelling (`get`, `journal`, `list`, `currentDetails`, `cancel`); `startInput` is run-lookup.ts's;
 * - call-decisions.ts: decisions on a running run's calls (`decide`, `callWaiting`, `answerInput`);
 * - run-decisions.ts: decisions on a running run as a whole (`decideScript`, `renewCredentials`,
 *   `signal`, `rollback`);
 * - run-sources.ts: what a run gives a saved script, a fork or a cassette (`scriptSource`,
 *   `forkSource`, `currentCredentials`, `cassette`).
 * No method uses `this`: each may be passed on alone.
 */
import type { Client } from "@temporalio/client";
import type {
  AdvanceInput,
  AdvanceResult,
  Cassette,
  ElicitationAnswer,
  ForkSeed,
  JournalView,
  RunInput,
} from "../shared/index.ts";
import type { CallDecided, ScriptDecided } from "../workflows/messages.ts";
import type { StartMetrics } from "../metrics/index.ts";
import {
  readCallWaiting,
  sendCallDecision,
  sendInputAnswer,
  type CallDecisionInput,
  type CallWaiting,
} from "./call-decisions.ts";
import { startRun, type StartRunInput } from "./run-launch.ts";
import type { RunListFilters, RunListPage } from "./run-list.ts";
import { runContextOf, startOf } from "./run-lookup.ts";
import { cancelRun, getRun, journalPage, listRunPage, readCurrentDetails, type RunView } from "./run-reads.ts";
import {
  rollbackRun,
  sendRenewedCredentials,
  sendScriptDecision,
  sendSignal,
  type ScriptDecisionInput,
} from "./run-decisions.ts";
import type { RollbackAsked } from "./run-rollback.ts";
import { readCassette, readCurrentCredentials, readForkSource, readScriptSource } from "./run-sources.ts";
import type { CalledTool } from "./run-start.ts";

export type { CallDecision, CallDecisionInput, CallWaiting } from "./call-decisions.ts";
export type { StartRunInput } from "./run-launch.ts";
export type { RunView } from "./run-reads.ts";

export interface RunServiceOptions {
  client: Client;
  taskQueue: string;
  /** Base URL of the Temporal Web UI, when there is one. */
  uiUrl: string | undefined;
  /** Passed to every run: continue as new after this many history events. */
  continueAsNewAfterEvents?: number | undefined;
  /**
   * Ask Temporal to start runs eagerly: only when `client` shares its connection with a worker
   * polling `taskQueue` in this process (the embedded stack). Temporal falls back to an ordinary
   * start when that worker has no free slot.
   */
  eagerStart?: boolean;
  /** Counts the runs started, eagerly or not; default: nothing. */
  metrics?: StartMetrics;
  /**
   * The `advanceScript` of a Rewind worker in this process: a new run's first step is taken here,
   * before the run starts, and carried in its input (`RunInput.firstStep`), the run's isolate left
   * warm in that worker.
   */
  advanceScript?: (input: AdvanceInput) => Promise<AdvanceResult>;
  /** Gives back what `advanceScript` left for a run that could not start (the worker's `forgetFirstStep`). */
  forgetFirstStep?: (namespace: string, runId: string) => void;
}

export const RUN_ID_PATTERN = /^run_[0-9A-Za-z]{10,64}$/;

export function createRunService(options: RunServiceOptions) {
  const context = runContextOf(options);
  return {
    // Starting (run-launch.ts).
    start(input: StartRunInput): Promise<{ id: string; created: boolean; view?: RunView }> {
      return startRun(context, options, input);
    },

    // Reading, and cancelling (run-reads.ts).
    get(runId: string, namespace: string): Promise<RunView> {
      return getRun(context, runId, namespace);
    },
    cancel(runId: string, namespace: string): Promise<RunView> {
      return cancelRun(context, runId, namespace);
    },
    journal(
      runId: string,
      namespace: string,
      afterSeq: number,
      limit: number,
      maxBytes?: number,
    ): Promise<JournalView & { nextAfterSeq?: number }> {
      return journalPage(context, runId, namespace, afterSeq, limit, maxBytes);
    },
    list(
      namespace: string,
      page: { pageSize: number; pageToken?: string | undefined },
      filters: RunListFilters = {},
    ): Promise<RunListPage> {
      return listRunPage(context, namespace, page, filters);
    },
    currentDetails(runId: string, namespace: string): Promise<string | undefined> {
      return readCurrentDetails(context, runId, namespace);
    },
    /** What the run started from: its script (as it runs), toolset and input. */
    startInput(runId: string, namespace: string): Promise<RunInput> {
      return startOf(context, runId, namespace);
    },

    // Decisions on a running run's calls (call-decisions.ts).
    decide(runId: string, namespace: string, seq: number, decision: CallDecisionInput): Promise<CallDecided> {
      return sendCallDecision(context, runId, namespace, seq, decision);
    },
    callWaiting(runId: string, namespace: string, seq: number): Promise<CallWaiting> {
      return readCallWaiting(context, runId, namespace, seq);
    },
    answerInput(runId: string, namespace: string, seq: number, answer: ElicitationAnswer): Promise<{ seq: number }> {
      return sendInputAnswer(context, runId, namespace, seq, answer);
    },

    // Decisions on a running run as a whole (run-decisions.ts).
    decideScript(runId: string, namespace: string, decision: ScriptDecisionInput): Promise<ScriptDecided> {
      return sendScriptDecision(context, runId, namespace, decision);
    },
    renewCredentials(runId: string, namespace: string, seal: (toolsetId: string) => Promise<string>): Promise<void> {
      return sendRenewedCredentials(context, runId, namespace, seal);
    },
    signal(runId: string, namespace: string, name: string, payload: unknown): Promise<void> {
      return sendSignal(context, runId, namespace, name, payload);
    },
    rollback(runId: string, namespace: string, asked: RollbackAsked): Promise<RunView> {
      return rollbackRun(context, runId, namespace, asked);
    },

    // What a run gives a saved script, a fork or a cassette (run-sources.ts).
    scriptSource(runId: string, namespace: string): Promise<{ input: RunInput; called: CalledTool[] }> {
      return readScriptSource(context, runId, namespace);
    },
    forkSource(
      runId: string,
      namespace: string,
    ): Promise<{ toolsetId: string; endUser?: string; input: RunInput; seed: ForkSeed }> {
      return readForkSource(context, runId, namespace);
    },
    currentCredentials(runId: string): Promise<string | undefined> {
      return readCurrentCredentials(context, runId);
    },
    cassette(runId: string, namespace: string): Promise<Cassette> {
      return readCassette(context, runId, namespace);
    },
  };
}

export type RunService = ReturnType<typeof createRunService>;
