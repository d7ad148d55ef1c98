/**
 * Runs as the API sees them, on top of the Temporal client: start a run workflow, read its
 * status and result, list runs through visibility (run-list.ts), cancel. A run belongs to the
 * namespace that started it; asking for another namespace's run looks exactly like asking for a
 * missing one. Each run starts with what the Temporal UI shows of it: a static summary and
 * details, a memo (toolset, end user) and its start time as a search attribute.
 */
import { createHash } from "node:crypto";
import {
  WorkflowFailedError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
} from "@temporalio/client";
import { TypedSearchAttributes } from "@temporalio/common";
import { ulid } from "ulid";
import {
  SANDBOX_RUNTIME_VERSION,
  runtimeVersionOf,
  RUN_ID_PREFIX,
  RUN_WORKFLOW_TYPE,
  SEARCH_ATTRIBUTES,
  type Cassette,
  type ForkSeed,
  type JournalView,
  type RunInput,
  type RunFailure,
  type RunState,
  type RollbackSummary,
  describeRunStart,
  firstStepInput,
  requiresScriptApproval,
  runCredentialRef,
  type AdvanceInput,
  type AdvanceResult,
  type FirstStep,
} from "../shared/index.ts";
import { runFailureOf } from "./run-failure.ts";
import type { ElicitationAnswer, JsonSchema, RunStatus, ScriptApprovalView } from "../shared/index.ts";
import { validateAgainstSchema } from "../schemas/index.ts";
import {
  answerCallInputUpdate,
  approveCallUpdate,
  approveScriptUpdate,
  failCallUpdate,
  getRunCredentialsQuery,
  getStatusQuery,
  rejectCallUpdate,
  rejectScriptUpdate,
  resolveCallUpdate,
  resumeCallUpdate,
  retryCallUpdate,
  runCredentialsRenewedSignal,
  deliverSignal,
  type CallDecided,
  type ScriptDecided,
} from "../workflows/messages.ts";
import { sendCallUpdate } from "./call-updates.ts";
import { askRollback, endedRolledBack, rollbackInProgress, type RollbackAsked } from "./run-rollback.ts";
import { HttpError, notFound } from "./http-error.ts";
import { noWorkerAnswered, readJournal, readWholeJournal } from "./worker-query.ts";
import { listRuns, type RunListFilters } from "./run-list.ts";
import { readCalledTools, readRunStart, type CalledTool } from "./run-start.ts";
import type { StartMetrics } from "../metrics/index.ts";

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

export interface RunView {
  id: string;
  status: RunState;
  toolset: string | undefined;
  endUser: string | undefined;
  startedAt: string | undefined;
  closedAt: string | undefined;
  result?: unknown;
  error?: RunFailure;
  /** Calls waiting for the harness (approval…), while the run is parked. */
  parked?: { seq: number; tool: string; args: unknown; reason: string }[];
  /** Set once a rollback began: in progress, or how the run ended `rolledBack`. */
  rollback?: RollbackSummary;
  /** While the run waits, before its first step, for its script's approval. */
  scriptApproval?: ScriptApprovalView;
  temporalUrl: string | undefined;
}

export type StartRunInput = Omit<RunInput, "runId"> & { idempotencyKey?: string };

/** What a decision on a parked call decides; the last three decide a call parked on an unknown outcome. */
export type CallDecision =
  | { approve: true }
  | { approve: false; reason?: string }
  | { resume: true }
  | { resolve: { result: unknown } }
  | { retry: true }
  | { fail: true; reason?: string };

/** A call of a running run as its status shows it: why it is parked, if it is. */
export interface CallWaiting {
  /** The toolset the run pinned. */
  toolsetId: string;
  parked?: { seq: number; tool: string; reason: string };
}

/** A decision on a parked call, with who decided: the API key's principal and, if given, on whose behalf. */

export type CallDecisionInput = CallDecision & {
  principal: string;
  by?: string | undefined;
};

/** When a run started: its first execution's start (`RewindStartedAt`), else, for runs older than it, this execution's. */
function startedAtOf(d: WorkflowExecutionDescription): Date {
  return d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.startedAt) ?? d.startTime;
}

const TEMPORAL_STATUS: Record<string, RunState> = {
  COMPLETED: "completed",
  FAILED: "failed",
  TERMINATED: "failed",
  TIMED_OUT: "failed",
  CANCELLED: "cancelled",
};

export const RUN_ID_PATTERN = /^run_[0-9A-Za-z]{10,64}$/;

export function createRunService(options: RunServiceOptions) {
  const { client } = options;
  const uiLink = (runId: string) =>
    options.uiUrl ? `${options.uiUrl}/namespaces/${client.options.namespace}/workflows/${runId}` : undefined;

  function runIdFor(namespace: string, idempotencyKey: string | undefined): string {
    if (!idempotencyKey) return RUN_ID_PREFIX + ulid();
    return RUN_ID_PREFIX + createHash("sha256").update(`${namespace}\n${idempotencyKey}`).digest("hex").slice(0, 32);
  }

  async function describeOwned(runId: string, namespace: string) {
    try {
      const description = await client.workflow.getHandle(runId).describe();
      const owner = description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.namespace);
      if (description.type !== RUN_WORKFLOW_TYPE || owner !== namespace) throw notFound(`run ${runId}`);
      return description;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw notFound(`run ${runId}`);
      throw error;
    }
  }

  /** The run's description when it is still running; 409 naming what it can no longer do otherwise. */
  async function describeRunning(runId: string, namespace: string, noLonger: string) {
    const d = await describeOwned(runId, namespace);
    if (d.status.name !== "RUNNING")
      throw new HttpError(
        409,
        "conflict",
        `run ${runId} is ${TEMPORAL_STATUS[d.status.name] ?? "not running"}; ${noLonger}`,
      );
    return d;
  }

  /** What the run started from (its current execution's start: continue-as-new keeps script and toolset). */
  async function startOf(runId: string, namespace: string): Promise<RunInput> {
    const d = await describeOwned(runId, namespace);
    const input = await readRunStart(client, runId, d.runId);
    if (!input) throw new HttpError(409, "conflict", `run ${runId} has no readable start`);
    return input;
  }

  /**
   * The new run's first step, taken beside the API when a worker shares its process; none for a
   * run that waits for its script's approval, a fork, or a run with an idempotency key (its id is
   * not new: a repeat must not touch the isolate of the run it names). A step that could not be
   * taken is left to the run.
   */
  async function firstStepOf(runId: string, run: StartRunInput): Promise<FirstStep | undefined> {
    if (!options.advanceScript || run.idempotencyKey !== undefined || requiresScriptApproval(run) || run.fork)
      return undefined;
    const startedAt = Date.now();
    try {
      const step = await options.advanceScript(
        firstStepInput(
          { ...run, runId, runtimeVersion: SANDBOX_RUNTIME_VERSION },
          startedAt,
          runCredentialRef(run, startedAt),
        ),
      );
      return step.kind === "needsColdStart" ? undefined : step;
    } catch {
      return undefined;
    }
  }

  return {
    /**
     * Starts a run; with an idempotency key, a repeat returns the run the first call started.
     * A new run's view is known without asking Temporal (running, just started), which saves
     * every start a round trip; a repeat's is looked up.
     */
    async start(input: StartRunInput): Promise<{ id: string; created: boolean; view?: RunView }> {
      const runId = runIdFor(input.namespace, input.idempotencyKey);
      const { idempotencyKey: _key, ...rest } = input;
      const requestedAt = new Date();
      const attributes = new TypedSearchAttributes([
        { key: SEARCH_ATTRIBUTES.namespace, value: input.namespace },
        { key: SEARCH_ATTRIBUTES.toolset, value: input.toolsetId },
        { key: SEARCH_ATTRIBUTES.status, value: "running" },
        ...(input.endUser ? [{ key: SEARCH_ATTRIBUTES.endUser, value: input.endUser }] : []),
      ]).updateCopy([{ key: SEARCH_ATTRIBUTES.startedAt, value: requestedAt }]);
      // Start options, not commands of the workflow: what the UI shows needs no patch.
      const { staticSummary, staticDetails, memo } = describeRunStart(rest);
      const firstStep = await firstStepOf(runId, input);
      try {
        const handle = await client.workflow.start(RUN_WORKFLOW_TYPE, {
          taskQueue: options.taskQueue,
          workflowId: runId,
          args: [
            {
              ...rest,
              runId,
              runtimeVersion: SANDBOX_RUNTIME_VERSION,
              ...(firstStep ? { firstStep } : {}),
              ...(options.continueAsNewAfterEvents
                ? { continueAsNewAfterEvents: options.continueAsNewAfterEvents }
                : {}),
            } satisfies RunInput,
          ],
          typedSearchAttributes: attributes,
          memo: { ...memo },
          staticSummary,
          staticDetails,
          workflowIdReusePolicy: "REJECT_DUPLICATE",
          ...(options.eagerStart ? { requestEagerStart: true } : {}),
        });
        options.metrics?.runStartedByApi(handle.eagerlyStarted ? "eager" : "queued");
        const view: RunView = {
          id: runId,
          status: "running",
          toolset: input.toolsetId,
          endUser: input.endUser,
          startedAt: requestedAt.toISOString(),
          closedAt: undefined,
          temporalUrl: uiLink(runId),
        };
        return { id: runId, created: true, view };
      } catch (error) {
        // Never for a repeat: a run with an idempotency key carries no first step.
        if (firstStep) options.forgetFirstStep?.(input.namespace, runId);
        if (error instanceof WorkflowExecutionAlreadyStartedError && input.idempotencyKey) {
          await describeOwned(runId, input.namespace);
          return { id: runId, created: false };
        }
        throw error;
      }
    },

    async get(runId: string, namespace: string): Promise<RunView> {
      const d = await describeOwned(runId, namespace);
      const rolledBack = endedRolledBack(d);
      const closed = rolledBack ? "rolledBack" : TEMPORAL_STATUS[d.status.name];
      const view: RunView = {
        id: runId,
        status: closed ?? (d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.status) === "parked" ? "parked" : "running"),
        toolset: d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.toolset),
        endUser: d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.endUser),
        startedAt: startedAtOf(d).toISOString(),
        closedAt: d.closeTime?.toISOString(),
        temporalUrl: uiLink(runId),
      };
      if (view.status === "parked") {
        const parked = await parkedStatus(client, runId);
        view.parked = parked?.parked;
        if (parked?.scriptApproval) view.scriptApproval = parked.scriptApproval;
      }
      if (closed === "completed") view.result = await client.workflow.getHandle(runId).result();
      if (closed === "failed") view.error = await failureOf(client, runId);
      // A rolled-back run completed with its rollback as its result.
      if (rolledBack) view.rollback = (await client.workflow.getHandle(runId).result()) as RollbackSummary;
      if (!closed) {
        const rollback = await rollbackInProgress(client, runId, d, withinQueryTimeout);
        if (rollback) view.rollback = rollback;
      }
      return view;
    },

    /**
     * Rolls an open run back (running or parked): it stops its script and reverts its completed
     * calls; 409 once it ended, is ending or rolls back already.
     */
    async rollback(runId: string, namespace: string, asked: RollbackAsked): Promise<RunView> {
      await describeRunning(runId, namespace, "only an open run can be rolled back");
      await askRollback(client, runId, asked);
      return this.get(runId, namespace);
    },

    /**
     * Approves or rejects the script of a run waiting for that before its first step; 409 when
     * it does not wait for it (it never asked, was decided, or ended).
     */
    async decideScript(
      runId: string,
      namespace: string,
      decision: { approve: boolean; reason?: string | undefined; principal: string; by?: string | undefined },
    ): Promise<ScriptDecided> {
      await describeRunning(runId, namespace, "its script can no longer be approved or rejected");
      const handle = client.workflow.getHandle(runId);
      const decidedBy = { principal: decision.principal, ...(decision.by ? { by: decision.by } : {}) };
      const send = () =>
        decision.approve
          ? handle.executeUpdate(approveScriptUpdate, { args: [{ decidedBy }] })
          : handle.executeUpdate(rejectScriptUpdate, {
              args: [{ decidedBy, ...(decision.reason ? { reason: decision.reason } : {}) }],
            });
      return sendCallUpdate(client, runId, send, `run ${runId} is not waiting for its script's approval`);
    },

    /**
     * Approves, rejects or resumes a parked call, recording who decided in its journal entry;
     * 409 when the call is not waiting for a decision.
     */
    async decide(runId: string, namespace: string, seq: number, decision: CallDecisionInput): Promise<CallDecided> {
      await describeRunning(runId, namespace, "its calls can no longer be decided");
      const handle = client.workflow.getHandle(runId);
      const decidedBy = { principal: decision.principal, ...(decision.by ? { by: decision.by } : {}) };
      const send = () => {
        if ("resume" in decision) return handle.executeUpdate(resumeCallUpdate, { args: [{ seq, decidedBy }] });
        if ("resolve" in decision)
          return handle.executeUpdate(resolveCallUpdate, {
            args: [{ seq, decidedBy, result: decision.resolve.result }],
          });
        if ("retry" in decision) return handle.executeUpdate(retryCallUpdate, { args: [{ seq, decidedBy }] });
        if ("fail" in decision)
          return handle.executeUpdate(failCallUpdate, {
            args: [{ seq, decidedBy, ...(decision.reason ? { reason: decision.reason } : {}) }],
          });
        return decision.approve
          ? handle.executeUpdate(approveCallUpdate, { args: [{ seq, decidedBy }] })
          : handle.executeUpdate(rejectCallUpdate, {
              args: [{ seq, decidedBy, ...(decision.reason ? { reason: decision.reason } : {}) }],
            });
      };
      return sendCallUpdate(client, runId, send, `call ${seq} of run ${runId} is not waiting for a decision`);
    },

    /**
     * A running run's call and why it is parked, if it is, with the run's toolset: 404 for a call
     * the run never made, 409 once the run ended.
     */
    async callWaiting(runId: string, namespace: string, seq: number): Promise<CallWaiting> {
      const d = await describeRunning(runId, namespace, "its calls can no longer be decided");
      const status = await withinQueryTimeout(client.workflow.getHandle(runId).query(getStatusQuery));
      if (!status) throw noWorkerAnswered(runId);
      if (seq > status.calls.total) throw notFound(`call ${seq} of run ${runId}`);
      const parked = status.parked.find((p) => p.seq === seq);
      return {
        toolsetId: String(d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.toolset) ?? ""),
        ...(parked ? { parked: { seq, tool: parked.tool, reason: parked.reason } } : {}),
      };
    },

    /**
     * Answers the input a call's server asked for (an elicitation): 404 for a call the run never
     * made, 409 when the call waits for no input, 422 when accepted content does not fit the
     * schema the server asked for.
     */
    async answerInput(
      runId: string,
      namespace: string,
      seq: number,
      answer: ElicitationAnswer,
    ): Promise<{ seq: number }> {
      await describeRunning(runId, namespace, "its calls can no longer be answered");
      const status = await withinQueryTimeout(client.workflow.getHandle(runId).query(getStatusQuery));
      if (!status) throw noWorkerAnswered(runId);
      if (seq > status.calls.total) throw notFound(`call ${seq} of run ${runId}`);
      const waiting = status.parked.find((p) => p.seq === seq && p.reason === "elicitationRequested");
      const requestId = waiting?.details?.["requestId"];
      const refused = `call ${seq} of run ${runId} is not waiting for input`;
      if (typeof requestId !== "string") throw new HttpError(409, "conflict", refused);
      if (answer.action === "accept") {
        const schema = waiting?.details?.["requestedSchema"];
        const problem = validateAgainstSchema(
          typeof schema === "object" && schema !== null ? (schema as JsonSchema) : {},
          answer.content,
          "content",
        );
        if (problem)
          throw new HttpError(
            422,
            "invalidAnswer",
            `the content does not fit the schema call ${seq} asked for: ${problem.message}`,
            problem.details,
          );
      }
      const handle = client.workflow.getHandle(runId);
      return sendCallUpdate(
        client,
        runId,
        () => handle.executeUpdate(answerCallInputUpdate, { args: [{ seq, requestId, answer }] }),
        refused,
      );
    },

    async cancel(runId: string, namespace: string): Promise<RunView> {
      const d = await describeOwned(runId, namespace);
      if (d.status.name === "RUNNING") await client.workflow.getHandle(runId).cancel();
      return this.get(runId, namespace);
    },

    /**
     * Replaces a running run's own credentials: `seal` checks them against the run's toolset and
     * seals them; its calls parked on them are sent again with the same key, and every later call
     * uses them. 409 once the run ended. One describe answers ownership, state and toolset.
     */
    async renewCredentials(
      runId: string,
      namespace: string,
      seal: (toolsetId: string) => Promise<string>,
    ): Promise<void> {
      const d = await describeRunning(runId, namespace, "its credentials can no longer be renewed");
      const sealed = await seal(String(d.typedSearchAttributes.get(SEARCH_ATTRIBUTES.toolset) ?? ""));
      await client.workflow.getHandle(runId).signal(runCredentialsRenewedSignal, { sealed });
    },

    /**
     * Sends the run the signal `name` with `payload`, as its webhook would: what the script's
     * `waitForSignal(name)` answers (or will, if it waits later; signals wait in the run's inbox).
     * 404 for another namespace's run, 409 once the run ended.
     */
    async signal(runId: string, namespace: string, name: string, payload: unknown): Promise<void> {
      await describeRunning(runId, namespace, "it can no longer receive signals");
      try {
        await client.workflow.getHandle(runId).signal(deliverSignal, { name, payload });
      } catch (error) {
        if (error instanceof WorkflowNotFoundError)
          throw new HttpError(409, "conflict", `run ${runId} is no longer running; it can no longer receive signals`);
        throw error;
      }
    },

    /** The run's own credentials as its calls now use them (renewed ones once renewed), sealed. */
    async currentCredentials(runId: string): Promise<string | undefined> {
      return (
        (await withinQueryTimeout(client.workflow.getHandle(runId).query(getRunCredentialsQuery)))?.sealed ?? undefined
      );
    },

    /** What saving a run's script needs: what the run started from, and every tool its journal shows it called. */
    async scriptSource(runId: string, namespace: string): Promise<{ input: RunInput; called: CalledTool[] }> {
      const input = await startOf(runId, namespace);
      return { input, called: await readCalledTools(client, runId) };
    },

    /** What a fork needs of its parent: its toolset, end user, input, own credentials and finished calls. */
    async forkSource(
      runId: string,
      namespace: string,
    ): Promise<{ toolsetId: string; endUser?: string; input: RunInput; seed: ForkSeed }> {
      const input = await startOf(runId, namespace);
      const view = await readWholeJournal(client, runId);
      const calls = view.entries.flatMap((e): ForkSeed["calls"] => {
        if (e.status === "completed")
          return [{ seq: e.seq, tool: e.tool, args: e.args, outcome: { ok: true as const, value: e.result ?? null } }];
        if (e.status === "failed" && e.error)
          return [{ seq: e.seq, tool: e.tool, args: e.args, outcome: { ok: false as const, error: e.error } }];
        return [];
      });
      return {
        toolsetId: input.toolsetId,
        ...(input.endUser ? { endUser: input.endUser } : {}),
        input,
        seed: { parentRunId: runId, calls },
      };
    },

    /** The run as a cassette: toolset, script, input and every call with its outcome; no credentials. */
    async cassette(runId: string, namespace: string): Promise<Cassette> {
      const input = await startOf(runId, namespace);
      const view = await readWholeJournal(client, runId, { withBatches: true });
      return {
        format: "rewind.cassette/1",
        runId,
        toolsetId: input.toolsetId,
        toolset: input.toolset,
        scriptHash: input.scriptHash,
        script: input.script,
        input: input.input,
        startedAt: view.startedAt ?? 0,
        entries: view.entries,
        batches: view.batches ?? [],
        runtimeVersion: runtimeVersionOf(input),
      };
    },

    /** The run's journal, a page of entries at a time (answered by a worker, from its state). */
    async journal(
      runId: string,
      namespace: string,
      afterSeq: number,
      limit: number,
      maxBytes?: number,
    ): Promise<JournalView & { nextAfterSeq?: number }> {
      await describeOwned(runId, namespace);
      const view = await readJournal(client, runId, {
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
    },

    /** A page of the namespace's runs, newest first, filtered (run-list.ts). */
    async list(
      namespace: string,
      page: { pageSize: number; pageToken?: string | undefined },
      filters: RunListFilters = {},
    ) {
      return listRuns(client, uiLink, namespace, page, filters);
    },
  };
}

export type RunService = ReturnType<typeof createRunService>;

const QUERY_TIMEOUT_MS = 3_000;

/** A query's answer, or undefined when it fails or no worker answers within QUERY_TIMEOUT_MS. */
function withinQueryTimeout<T>(query: Promise<T>): Promise<T | undefined> {
  const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), QUERY_TIMEOUT_MS).unref());
  return Promise.race([query.catch(() => undefined), timeout]);
}

/** Parked calls come from the run's own state; without a worker to answer, they are left out. */
async function parkedStatus(client: Client, runId: string): Promise<RunStatus | undefined> {
  return withinQueryTimeout(client.workflow.getHandle(runId).query(getStatusQuery));
}

async function failureOf(client: Client, runId: string): Promise<RunView["error"]> {
  try {
    await client.workflow.getHandle(runId).result();
    return undefined;
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    return runFailureOf(error.cause, error.message);
  }
}
