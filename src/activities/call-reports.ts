/**
 * Call reports, from the activity's side: what a tool call tells its run while it is in flight.
 * Progress is a `callProgress` signal, coalesced per call (at most one a second, the last value
 * always sent) and best effort. A request for input (an MCP elicitation) is a
 * `callInputRequested` signal that parks the call; the attempt then polls the run's
 * `getCallInput` query until the harness's answer is there, the run says the request can no
 * longer be answered, or the attempt's abort signal fires (timeout, cancellation, shutdown), in
 * which case the run is told the request is withdrawn. The run is the workflow whose id is the
 * run id; the workflow keeps the reports (src/workflows/run/call-report-desk.ts).
 */
import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { QueryNotRegisteredError, WorkflowNotFoundError, type Client } from "@temporalio/client";
import type { CallInputState, ElicitationAnswer, ElicitationRequest } from "../shared/index.ts";
import {
  callInputRequestedSignal,
  callInputWithdrawnSignal,
  callProgressSignal,
  getCallInputQuery,
} from "../workflows/messages.ts";
import { createProgressCoalescer } from "./progress-coalescer.ts";

export type { ElicitationAnswer, ElicitationRequest } from "../shared/index.ts";

/** One attempt of one call: the run's namespace (from the call's CredentialRef), its id, the call's seq. */
export interface CallRef {
  namespace: string;
  runId: string;
  seq: number;
  attempt: number;
}

export interface CallReports {
  /** Latest progress of a call in flight; best effort (never throws), coalesced: at most ~1 signal per second per call, the last value always delivered. */
  progress(call: CallRef, progress: { progress: number; total?: number; message?: string }): void;
  /** Sends the call's latest progress now, so the journal has it before the call's result. */
  settle(call: CallRef): Promise<void>;
  /** Parks the call until the harness answers, the signal aborts (timeout / cancellation / worker shutdown), or the run rejects; resolves with the answer. */
  askInput(call: CallRef, request: ElicitationRequest, signal: AbortSignal): Promise<ElicitationAnswer>;
}

export interface CallReportsOptions {
  /** Least time between two progress signals of one call. Default 1000 ms. */
  progressEveryMs?: number;
  /** Between two polls for the answer to an input request. Default 500 ms. */
  pollEveryMs?: number;
}

/** The run will not answer this request: it was withdrawn or superseded, or the call or run ended. */
export class InputRequestClosedError extends Error {
  override name = "InputRequestClosedError";
}

type Progress = Parameters<CallReports["progress"]>[1];

const keyOf = (call: CallRef) => `${call.runId}/${call.seq}/${call.attempt}`;

export function createCallReports(client: Client, options: CallReportsOptions = {}): CallReports {
  const pollEveryMs = options.pollEveryMs ?? 500;
  const latest = createProgressCoalescer<{ call: CallRef; progress: Progress }>(async (_key, { call, progress }) => {
    await client.workflow.getHandle(call.runId).signal(callProgressSignal, {
      namespace: call.namespace,
      seq: call.seq,
      attempt: call.attempt,
      progress: progress.progress,
      ...(progress.total === undefined ? {} : { total: progress.total }),
      ...(progress.message ? { message: progress.message.slice(0, 500) } : {}),
    });
  }, options.progressEveryMs ?? 1000);

  /** One poll; undefined when the run could not be asked this time (no worker answered, a blip). */
  async function poll(call: CallRef, requestId: string, signal: AbortSignal): Promise<CallInputState | undefined> {
    try {
      return await client.withAbortSignal(signal, () =>
        client.workflow.getHandle(call.runId).query(getCallInputQuery, { seq: call.seq, requestId }),
      );
    } catch (error) {
      if (signal.aborted) throw error;
      if (error instanceof WorkflowNotFoundError) return { state: "closed", reason: `run ${call.runId} was not found` };
      if (error instanceof QueryNotRegisteredError)
        return { state: "closed", reason: `run ${call.runId} takes no input requests (it runs on an earlier release)` };
      return undefined;
    }
  }

  async function waitForAnswer(call: CallRef, requestId: string, signal: AbortSignal): Promise<ElicitationAnswer> {
    for (;;) {
      const state = await poll(call, requestId, signal);
      if (state?.state === "answered") return state.answer;
      if (state?.state === "closed")
        throw new InputRequestClosedError(`input request of call ${call.seq} of run ${call.runId}: ${state.reason}`);
      await delay(pollEveryMs, undefined, { signal });
    }
  }

  return {
    progress(call, progress) {
      if (!Number.isFinite(progress.progress)) return;
      latest.offer(keyOf(call), { call, progress });
    },

    settle(call) {
      return latest.flush(keyOf(call));
    },

    async askInput(call, request, signal) {
      signal.throwIfAborted();
      const handle = client.workflow.getHandle(call.runId);
      const requestId = randomUUID();
      const header = { namespace: call.namespace, seq: call.seq, attempt: call.attempt, requestId };
      try {
        await client.withAbortSignal(signal, () =>
          handle.signal(callInputRequestedSignal, {
            ...header,
            message: request.message,
            requestedSchema: request.requestedSchema,
          }),
        );
        return await waitForAnswer(call, requestId, signal);
      } catch (error) {
        if (error instanceof WorkflowNotFoundError && !signal.aborted)
          throw new InputRequestClosedError(`input request of call ${call.seq}: run ${call.runId} is not running`);
        if (!signal.aborted) throw error;
        // Best effort: the run stops showing the call as waiting (its end would close the request too).
        handle.signal(callInputWithdrawnSignal, header).catch(() => undefined);
        throw signal.reason ?? error;
      }
    },
  };
}
