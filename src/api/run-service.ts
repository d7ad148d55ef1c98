/**
 * Runs as the API sees them, on top of the Temporal client: start a run workflow, read its
 * status and result, list runs through visibility (run-list.ts), cancel. A run belongs to the
 * namespace that started it; asking for another namespace's run looks exactly like asking for a
 * missing one. Each run starts with what the Temporal UI shows of it: a static summary and
 * details, a memo (toolset, end user) and its start time as a search attribute. The service
 * checks that a run is the caller's (and, for what only an open run can do, that it still runs)
 * and hands the rest to a file each: starting a run (run-launch.ts), its view (run-view.ts),
 * decisions on its script and parked calls (call-decisions.ts), forks and cassettes (run-copies.ts).
 */
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
} from "@temporalio/client";
import {
  RUN_WORKFLOW_TYPE,
  SEARCH_ATTRIBUTES,
  type Cassette,
  type JournalView,
  type RunInput,
  type AdvanceInput,
  type AdvanceResult,
  type ElicitationAnswer,
} from "../shared/index.ts";
import {
  getRunCredentialsQuery,
  runCredentialsRenewedSignal,
  deliverSignal,
  type CallDecided,
  type ScriptDecided,
} from "../workflows/messages.ts";
import {
  readCallWaiting,
  sendCallDecision,
  sendInputAnswer,
  sendScriptDecision,
  type CallDecisionInput,
  type CallWaiting,
  type ScriptDecisionInput,
} from "./call-decisions.ts";
import { readCassette, readForkSource, type ForkSource } from "./run-copies.ts";
import { runIdFor, startRunWorkflow } from "./run-launch.ts";
import { askRollback, type RollbackAsked } from "./run-rollback.ts";
import { newRunView, readRunView, TEMPORAL_STATUS, type RunView } from "./run-view.ts";
import { HttpError, notFound } from "./http-error.ts";
import { readJournal, withinQueryTimeout } from "./worker-query.ts";
import { listRuns, type RunListFilters, type RunListPage } from "./run-list.ts";
import { readCalledTools, readRunStart, type CalledTool } from "./run-start.ts";
import type { StartMetrics } from "../metrics/index.ts";

export type { CallDecision, CallDecisionInput, CallWaiting } from "./call-decisions.ts";
export type { RunView } from "./run-view.ts";

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

export type StartRunInput = Omit<RunInput, "runId"> & { idempotencyKey?: string };

export const RUN_ID_PATTERN = /^run_[0-9A-Za-z]{10,64}$/;

export function createRunService(options: RunServiceOptions): RunService {
  return new RunService(options);
}

/** The runs of every namespace, through one Temporal client; each method takes the caller's namespace. */
export class RunService {
  private readonly client: Client;
  private readonly options: RunServiceOptions;

  constructor(options: RunServiceOptions) {
    this.client = options.client;
    this.options = options;
  }

  /**
   * Starts a run; with an idempotency key, a repeat returns the run the first call started.
   * A new run's view is known without asking Temporal (running, just started), which saves
   * every start a round trip; a repeat's is looked up.
   */
  readonly start = async (input: StartRunInput): Promise<{ id: string; created: boolean; view?: RunView }> => {
    const runId = runIdFor(input.namespace, input.idempotencyKey);
    try {
      const requestedAt = await startRunWorkflow(this.client, this.options, runId, input);
      return { id: runId, created: true, view: newRunView(runId, input, requestedAt, this.uiLink(runId)) };
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError && input.idempotencyKey) {
        await this.describeOwned(runId, input.namespace);
        return { id: runId, created: false };
      }
      throw error;
    }
  };

  readonly get = async (runId: string, namespace: string): Promise<RunView> => {
    const d = await this.describeOwned(runId, namespace);
    return readRunView(this.client, runId, d, this.uiLink(runId));
  };

  /**
   * Rolls an open run back (running or parked): it stops its script and reverts its completed
   * calls; 409 once it ended, is ending or rolls back already.
   */
  readonly rollback = async (runId: string, namespace: string, asked: RollbackAsked): Promise<RunView> => {
    await this.describeRunning(runId, namespace, "only an open run can be rolled back");
    await askRollback(this.client, runId, asked);
    return this.get(runId, namespace);
  };

  /**
   * Approves or rejects the script of a run waiting for that before its first step; 409 when
   * it does not wait for it (it never asked, was decided, or ended).
   */
  readonly decideScript = async (
    runId: string,
    namespace: string,
    decision: ScriptDecisionInput,
  ): Promise<ScriptDecided> => {
    await this.describeRunning(runId, namespace, "its script can no longer be approved or rejected");
    return sendScriptDecision(this.client, runId, decision);
  };

  /**
   * Approves, rejects or resumes a parked call, recording who decided in its journal entry;
   * 409 when the call is not waiting for a decision.
   */
  readonly decide = async (
    runId: string,
    namespace: string,
    seq: number,
    decision: CallDecisionInput,
  ): Promise<CallDecided> => {
    await this.describeRunning(runId, namespace, "its calls can no longer be decided");
    return sendCallDecision(this.client, runId, seq, decision);
  };

  /**
   * A running run's call and why it is parked, if it is, with the run's toolset: 404 for a call
   * the run never made, 409 once the run ended.
   */
  readonly callWaiting = async (runId: string, namespace: string, seq: number): Promise<CallWaiting> => {
    const d = await this.describeRunning(runId, namespace, "its calls can no longer be decided");
    return readCallWaiting(this.client, runId, d, seq);
  };

  /**
   * Answers the input a call's server asked for (an elicitation): 404 for a call the run never
   * made, 409 when the call waits for no input, 422 when accepted content does not fit the
   * schema the server asked for.
   */
  readonly answerInput = async (
    runId: string,
    namespace: string,
    seq: number,
    answer: ElicitationAnswer,
  ): Promise<{ seq: number }> => {
    await this.describeRunning(runId, namespace, "its calls can no longer be answered");
    return sendInputAnswer(this.client, runId, seq, answer);
  };

  readonly cancel = async (runId: string, namespace: string): Promise<RunView> => {
    const d = await this.describeOwned(runId, namespace);
    if (d.status.name === "RUNNING") await this.client.workflow.getHandle(runId).cancel();
    return this.get(runId, namespace);
  };

  /**
   * Replaces a running run's own credentials: `seal` checks them against the run's toolset and
   * seals them; its calls parked on them are sent again with the same key, and every later call
   * uses them. 409 once the run ended. One describe answers ownership, state and toolset.
   */
  readonly renewCredentials = async (
    runId: string,
    namespace: string,
    seal: (toolsetId: string) => Promise<string>,
  ): Promise<void> => {
    const d = await this.describeRunning(runId, namespace, "its credentials can no longer be renewed");
    const sealed = await seal(String(d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.toolset) ?? ""));
    await this.client.workflow.getHandle(runId).signal(runCredentialsRenewedSignal, { sealed });
  };

  /**
   * Sends the run the signal `name` with `payload`, as its webhook would: what the script's
   * `waitForSignal(name)` answers (or will, if it waits later; signals wait in the run's inbox).
   * 404 for another namespace's run, 409 once the run ended.
   */
  readonly signal = async (runId: string, namespace: string, name: string, payload: unknown): Promise<void> => {
    await this.describeRunning(runId, namespace, "it can no longer receive signals");
    try {
      await this.client.workflow.getHandle(runId).signal(deliverSignal, { name, payload });
    } catch (error) {
      if (error instanceof WorkflowNotFoundError)
        throw new HttpError(409, "conflict", `run ${runId} is no longer running; it can no longer receive signals`);
      throw error;
    }
  };

  /** The run's own credentials as its calls now use them (renewed ones once renewed), sealed. */
  readonly currentCredentials = async (runId: string): Promise<string | undefined> => {
    return (
      (await withinQueryTimeout(this.client.workflow.getHandle(runId).query(getRunCredentialsQuery)))?.sealed ??
      undefined
    );
  };

  /** What saving a run's script needs: what the run started from, and every tool its journal shows it called. */
  readonly scriptSource = async (
    runId: string,
    namespace: string,
  ): Promise<{ input: RunInput; called: CalledTool[] }> => {
    const input = await this.startOf(runId, namespace);
    return { input, called: await readCalledTools(this.client, runId) };
  };

  /** What a fork needs of its parent: its toolset, end user, input, own credentials and finished calls. */
  readonly forkSource = async (runId: string, namespace: string): Promise<ForkSource> => {
    const input = await this.startOf(runId, namespace);
    return readForkSource(this.client, runId, input);
  };

  /** The run as a cassette: toolset, script, input and every call with its outcome; no credentials. */
  readonly cassette = async (runId: string, namespace: string): Promise<Cassette> => {
    const input = await this.startOf(runId, namespace);
    return readCassette(this.client, runId, input);
  };

  /** The run's journal, a page of entries at a time (answered by a worker, from its state). */
  readonly journal = async (
    runId: string,
    namespace: string,
    afterSeq: number,
    limit: number,
    maxBytes?: number,
  ): Promise<JournalView & { nextAfterSeq?: number }> => {
    await this.describeOwned(runId, namespace);
    const view = await readJournal(this.client, runId, {
      afterSeq,
      limit: limit + 1,
      ...(maxBytes === undefined ? {} : { maxBytes }),
    });
    const more = view.entries.length > limit || view.truncated === true;
    const entries = view.entries.slice(0, limit);
    const last = entries.at(-1);
    return {
      entries,
      completionOrder: view.completionOrder,
      ...(view.fork ? { fork: view.fork } : {}),
      ...(view.scriptApproval ? { scriptApproval: view.scriptApproval } : {}),
      ...(more && last ? { nextAfterSeq: last.seq } : {}),
    };
  };

  /** A page of the namespace's runs, newest first, filtered (run-list.ts). */
  readonly list = async (
    namespace: string,
    page: { pageSize: number; pageToken?: string | undefined },
    filters: RunListFilters = {},
  ): Promise<RunListPage> => {
    return listRuns(this.client, this.uiLink, namespace, page, filters);
  };

  /** The run's page in the Temporal Web UI, when there is one (handed to run-list.ts too, hence bound). */
  private readonly uiLink = (runId: string): string | undefined =>
    this.options.uiUrl
      ? `${this.options.uiUrl}/namespaces/${this.client.options.namespace}/workflows/${runId}`
      : undefined;

  /** The run's description; 404 for a missing run, or one of another namespace or workflow type. */
  private async describeOwned(runId: string, namespace: string): Promise<WorkflowExecutionDescription> {
    try {
      const description = await this.client.workflow.getHandle(runId).describe();
      const owner = description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.namespace);
      if (description.type !== RUN_WORKFLOW_TYPE || owner !== namespace) throw notFound(`run ${runId}`);
      return description;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw notFound(`run ${runId}`);
      throw error;
    }
  }

  /** The run's description when it is still running; 409 naming what it can no longer do otherwise. */
  private async describeRunning(
    runId: string,
    namespace: string,
    noLonger: string,
  ): Promise<WorkflowExecutionDescription> {
    const d = await this.describeOwned(runId, namespace);
    if (d.status.name !== "RUNNING")
      throw new HttpError(
        409,
        "conflict",
        `run ${runId} is ${TEMPORAL_STATUS[d.status.name] ?? "not running"}; ${noLonger}`,
      );
    return d;
  }

  /** What the run started from (its current execution's start: continue-as-new keeps script and toolset). */
  private async startOf(runId: string, namespace: string): Promise<RunInput> {
    const d = await this.describeOwned(runId, namespace);
    const input = await readRunStart(this.client, runId, d.runId);
    if (!input) throw new HttpError(409, "conflict", `run ${runId} has no readable start`);
    return input;
  }
}
