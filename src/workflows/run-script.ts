/**
 * The run workflow: alternate between advancing the script in the sandbox and dispatching the
 * calls it issued, feeding completions back in the order they happened. Determinism rests on
 * the journal: the script's only inputs are the run input and the batches of completions, each
 * with the workflow time at which it was fed.
 */
import {
  ApplicationFailure, condition, proxyLocalActivities, setHandler, upsertSearchAttributes,
} from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";
import type { JournalEntry } from "../shared/journal.ts";
import { RUN_FAILURE_TYPES, SEARCH_ATTRIBUTES, type RunInput, type RunState } from "../shared/run.ts";
import type { AdvanceInput, AdvanceResult, ScriptError } from "../shared/step.ts";
import { dispatchCall } from "./dispatch.ts";
import { JournalBook } from "./journal-book.ts";
import { deliverSignal, getJournalQuery, getStatusQuery } from "./messages.ts";
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

export async function runScript(input: RunInput): Promise<unknown> {
  const journal = new JournalBook(input.carried);
  const inbox = new SignalInbox(input.carried?.signals);
  const startedAt = input.carried?.startedAt ?? Date.now();
  const ready: number[] = [];
  let inFlight = 0;
  let state: RunState = "running";

  setHandler(getStatusQuery, () => ({ state, calls: { total: journal.callCount, inFlight }, parked: [] }));
  setHandler(getJournalQuery, (options) => journal.view(options?.afterSeq, options?.limit));
  setHandler(deliverSignal, ({ name, payload }) => inbox.deliver(name, payload));

  const setState = (next: RunState): void => {
    state = next;
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.status, value: next }]);
  };

  const dispatch = (entry: JournalEntry): void => {
    inFlight += 1;
    entry.status = "running";
    entry.startedAt = Date.now();
    entry.attempts = 1;
    void dispatchCall(entry, { inbox }).then((outcome) => {
      journal.complete(entry.seq, outcome, Date.now());
      inFlight -= 1;
      ready.push(entry.seq);
    });
  };

  const step = async (base: Omit<AdvanceInput, "cold">): Promise<AdvanceResult> => {
    const warm = await advanceScript(base);
    if (warm.kind !== "needsColdStart") return warm;
    const history = journal.history().slice(0, base.consumedBatches);
    const cold = { script: input.script, input: input.input, toolset: input.toolset, startedAt, history, knownCalls: journal.callCount };
    const result = await advanceScript({ ...base, cold });
    if (result.kind === "needsColdStart") throw ApplicationFailure.nonRetryable("the sandbox refused a cold start");
    return result;
  };

  let outcome = journal.batches.length === 0 && journal.callCount === 0
    ? await advanceScript({
      runId: input.runId, consumedBatches: 0, batches: [],
      cold: { script: input.script, input: input.input, toolset: input.toolset, startedAt, history: [], knownCalls: 0 },
    })
    : await step({ runId: input.runId, consumedBatches: journal.batches.length, batches: [] });

  for (;;) {
    if (outcome.kind === "needsColdStart") throw ApplicationFailure.nonRetryable("the sandbox refused a cold start");
    for (const call of outcome.calls) {
      const entry = journal.record(call, Date.now());
      if (!call.refused) dispatch(entry);
    }
    if (outcome.kind === "done") {
      setState("completed");
      return outcome.result;
    }
    if (outcome.kind === "failed") {
      setState("failed");
      throw scriptFailure(outcome.error);
    }
    if (inFlight === 0 && ready.length === 0) {
      setState("failed");
      throw ApplicationFailure.create({
        type: RUN_FAILURE_TYPES.stuck,
        nonRetryable: true,
        message: "the script is waiting for a promise that nothing will settle (no call is in flight)",
      });
    }
    await condition(() => ready.length > 0);
    const consumedBatches = journal.batches.length;
    const batch = journal.addBatch(Date.now(), ready.splice(0));
    outcome = await step({ runId: input.runId, consumedBatches, batches: [batch] });
  }
}
