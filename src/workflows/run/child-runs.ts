/**
 * The `workflows` built-in: start a stored script as a child run (abandoned by its
 * parent, so each lives on its own), await its result, or signal a run of the same namespace.
 * A child tells its parent how it ended with a signal the parent buffers, so `result()` works
 * whenever it is called, and across the parent's continue-as-new. A child that can't tell
 * (terminated, timed out) is still seen ending: Temporal reports every child's close to the
 * execution that started it, and that report ends the parent's wait as well.
 */
import {
  CancelledFailure,
  ChildWorkflowFailure,
  ParentClosePolicy,
  TerminatedFailure,
  TimeoutFailure,
  getExternalWorkflowHandle,
  proxyLocalActivities,
  startChild,
  uuid4,
  workflowInfo,
} from "@temporalio/workflow";
import type { Activities } from "../../activities/index.ts";
import type { JournalEntry } from "../../shared/index.ts";
import {
  RUN_ID_PREFIX,
  RUN_WORKFLOW_TYPE,
  SEARCH_ATTRIBUTES,
  type RunInput,
  describeRunStart,
  SANDBOX_RUNTIME_VERSION,
  callSpanId,
} from "../../shared/index.ts";
import { failure, type CallOutcome } from "./call-outcome.ts";
import { deliverSignal } from "./messages.ts";
import { PATCHES } from "./patches.ts";
import { isPatched } from "./run-patches.ts";
import type { SignalInbox } from "./signal-inbox.ts";

const { loadStoredWorkflow, runNamespace } = proxyLocalActivities<Activities>({
  startToCloseTimeout: "30 seconds",
  retry: { maximumAttempts: 5 },
});

/** The signal a child sends its parent when it ends. */
export const childEndedSignal = (runId: string): string => `rewind.child:${runId}`;

/** How a child run ended, as its parent's `result()` reports it. */
export type ChildStatus = "failed" | "cancelled" | "terminated" | "timedOut";

export type ChildEnding =
  { ok: true; value: unknown } | { ok: false; message: string; status?: ChildStatus; error?: unknown };

/** The children this execution started, and which of them the script is waiting for. */
export class ChildRuns {
  /** Child run ids whose `result()` is being awaited now. */
  readonly awaited = new Set<string>();

  /** Asks every child the script is still waiting for to cancel (the parent is being cancelled). */
  async cancelAwaited(): Promise<void> {
    await Promise.all(
      [...this.awaited].map(async (runId) => {
        try {
          await getExternalWorkflowHandle(runId).cancel();
        } catch {
          // Already closed: nothing to cancel.
        }
      }),
    );
  }
}

export interface ChildRunContext {
  run: RunInput;
  inbox: SignalInbox;
  children: ChildRuns;
}

/** What Temporal's report of a child's close says, as the ending its parent sees. */
function endingOfFailure(error: unknown): ChildEnding {
  const cause = error instanceof ChildWorkflowFailure ? error.cause : error;
  const message = cause instanceof Error ? cause.message : String(cause);
  if (cause instanceof CancelledFailure) return { ok: false, status: "cancelled", message: message || "cancelled" };
  if (cause instanceof TerminatedFailure) return { ok: false, status: "terminated", message: message || "terminated" };
  if (cause instanceof TimeoutFailure) return { ok: false, status: "timedOut", message: message || "timed out" };
  return { ok: false, status: "failed", message };
}

export async function dispatchWorkflowCall(entry: JournalEntry, context: ChildRunContext): Promise<CallOutcome> {
  const args = entry.args as Record<string, unknown>;
  const { run } = context;
  switch (entry.tool) {
    case "rewind.workflows.start": {
      const name = String(args["workflow"]);
      const stored = await loadStoredWorkflow({ namespace: run.namespace, id: run.toolset.workflows[name] ?? "" });
      if (!stored)
        return failure(
          entry,
          "toolFailed",
          `workflows.${name}: its script ${run.toolset.workflows[name]} is not stored in this namespace`,
        );
      const runId = RUN_ID_PREFIX + uuid4().replace(/-/g, "");
      const child: RunInput = {
        runId,
        script: stored.script,
        scriptHash: stored.scriptHash,
        toolsetId: stored.toolsetId,
        toolset: stored.toolset,
        input: args["input"] ?? null,
        namespace: run.namespace,
        parentRunId: run.runId,
        runtimeVersion: SANDBOX_RUNTIME_VERSION,
        ...(run.endUser ? { endUser: run.endUser } : {}),
        ...(run.continueAsNewAfterEvents ? { continueAsNewAfterEvents: run.continueAsNewAfterEvents } : {}),
        // The child's run is a span under the call that started it, in the parent's trace.
        ...(run.trace
          ? {
              trace: {
                traceId: run.trace.traceId,
                rootSpanId: callSpanId(run.trace, -entry.seq),
                parentSpanId: callSpanId(run.trace, entry.seq),
              },
            }
          : {}),
      };
      // Summary, details, memo and start time are part of the command: children started before keep theirs without.
      const described = isPatched(PATCHES.childRunsDescribed);
      const { staticSummary, staticDetails, memo } = describeRunStart(child);
      const handle = await startChild(RUN_WORKFLOW_TYPE, {
        workflowId: runId,
        taskQueue: workflowInfo().taskQueue,
        parentClosePolicy: ParentClosePolicy.ABANDON,
        args: [child],
        typedSearchAttributes: [
          { key: SEARCH_ATTRIBUTES.namespace, value: run.namespace },
          { key: SEARCH_ATTRIBUTES.toolset, value: stored.toolsetId },
          { key: SEARCH_ATTRIBUTES.status, value: "running" },
          ...(run.endUser ? [{ key: SEARCH_ATTRIBUTES.endUser, value: run.endUser }] : []),
          ...(described ? [{ key: SEARCH_ATTRIBUTES.startedAt, value: new Date(Date.now()) }] : []),
        ],
        ...(described ? { staticSummary, staticDetails, memo: { ...memo } } : {}),
      });
      // A child that ends without telling (terminated, timed out) still ends the wait for it;
      // one that told first (its signal precedes its close in history) is not told twice.
      handle.result().then(
        () => undefined,
        (error: unknown) => {
          const name = childEndedSignal(runId);
          if (isPatched(PATCHES.childEndsParentWait) && !context.inbox.hasReceived(name))
            context.inbox.deliver(name, endingOfFailure(error));
        },
      );
      return { ok: true, value: { runId } };
    }
    case "rewind.workflows.result": {
      const runId = String(args["runId"]);
      context.children.awaited.add(runId);
      const taken = await context.inbox
        .take(childEndedSignal(runId), null)
        .finally(() => context.children.awaited.delete(runId));
      const ending = "payload" in taken ? (taken.payload as ChildEnding) : undefined;
      if (ending?.ok) return { ok: true, value: ending.value ?? null };
      // Runs that awaited a child before PATCHES.childEndsParentWait saw toolFailed, and replay so.
      if (!isPatched(PATCHES.childEndsParentWait))
        return failure(entry, "toolFailed", `run ${runId} failed: ${ending?.message ?? "unknown"}`);
      const status = ending?.status ?? "failed";
      return failure(
        entry,
        "childFailed",
        `run ${runId} ${CHILD_STATUS_WORDS[status]}: ${ending?.message ?? "unknown"}`,
        { runId, status, ...(ending?.error === undefined ? {} : { error: ending.error }) },
      );
    }
    case "rewind.workflows.signal": {
      const target = String(args["runId"]);
      // A script reaches only runs of its own namespace; another namespace's run looks missing.
      if ((await runNamespace({ runId: target })) !== run.namespace)
        return failure(entry, "toolFailed", `no run ${target}`);
      try {
        await getExternalWorkflowHandle(target).signal(deliverSignal, {
          name: String(args["signal"]),
          payload: args["payload"] ?? null,
        });
        return { ok: true, value: null };
      } catch (error) {
        return failure(
          entry,
          "toolFailed",
          `run ${target} could not be signalled: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    default:
      return failure(entry, "unknownTool", `${entry.tool} is not a workflows call`);
  }
}

const CHILD_STATUS_WORDS: Record<ChildStatus, string> = {
  failed: "failed",
  cancelled: "was cancelled",
  terminated: "was terminated",
  timedOut: "timed out",
};

/** Tells the parent, if any, how this run ended. A parent that has ended already is not told. */
export async function tellParent(run: RunInput, ending: ChildEnding): Promise<void> {
  if (!run.parentRunId) return;
  try {
    await getExternalWorkflowHandle(run.parentRunId).signal(deliverSignal, {
      name: childEndedSignal(run.runId),
      payload: ending,
    });
  } catch {
    // The parent is gone: nobody is waiting for this result.
  }
}
