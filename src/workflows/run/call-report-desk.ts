/**
 * What a run's calls report while in flight (call reports): the latest progress goes on the
 * call's journal entry; a request for input (an MCP elicitation) holds the call as parked,
 * announced as `call.input_requested` and recorded in the journal, until the harness answers it
 * (update `answerCallInput`), its attempt withdraws it, a newer request or attempt supersedes it,
 * or the call ends. The activity polls `getCallInput` for the answer. Reports are signals, which
 * no history of an earlier release holds, so none of this changes how those histories replay.
 */
import { isCancellation, setHandler } from "@temporalio/workflow";
import {
  MAX_INPUT_RECORDS,
  type CallInputAnswer,
  type CallInputRecord,
  type CallInputRequest,
  type CallInputState,
  type CallInputWithdrawal,
  type CallProgressReport,
} from "../../shared/index.ts";
import type { JournalEntry, RunInput } from "../../shared/index.ts";
import { reportParked } from "./call-spans.ts";
import type { JournalBook } from "./journal-book.ts";
import {
  answerCallInputUpdate,
  callInputRequestedSignal,
  callInputWithdrawnSignal,
  callProgressSignal,
  getCallInputQuery,
} from "./messages.ts";
import type { ParkingDesk } from "./parking-desk.ts";
import type { RunStatus } from "./run-status.ts";

export interface CallReportDeskDeps {
  /** The run, whose trace gets a span for each call held for input. */
  run: RunInput;
  /** The run's namespace: reports naming another are ignored. */
  namespace: string;
  journal: JournalBook;
  parking: ParkingDesk;
  status: RunStatus;
}

interface InputRequest {
  seq: number;
  requestId: string;
  attempt: number;
  state: CallInputState;
  /** The journal's record of it; absent for a request refused on arrival. */
  record?: CallInputRecord;
}

const ENDED = new Set(["completed", "failed", "cancelled"]);
const closed = (reason: string): CallInputState => ({ state: "closed", reason });
const ANSWER_ACTIONS = new Set(["accept", "decline", "cancel"]);

export class CallReportDesk {
  private readonly deps: CallReportDeskDeps;
  /** Every request of this execution by id; ended ones stay as small tombstones, so a late poll is told. */
  private readonly requests = new Map<string, InputRequest>();

  constructor(deps: CallReportDeskDeps) {
    this.deps = deps;
  }

  progress(report: CallProgressReport): void {
    const entry = this.inFlight(report);
    if (!entry) return;
    this.closeWaiting(entry.seq, (r) => r.attempt !== report.attempt, "its attempt ended");
    this.deps.journal.progressed(entry.seq, {
      progress: report.progress,
      ...(report.total === undefined ? {} : { total: report.total }),
      ...(report.message ? { message: report.message } : {}),
      attempt: report.attempt,
      at: Date.now(),
    });
  }

  async request(report: CallInputRequest): Promise<void> {
    const { seq, requestId, attempt, message, requestedSchema } = report;
    if (this.requests.has(requestId)) return;
    const entry = this.inFlight(report);
    if (!entry) {
      this.requests.set(requestId, { seq, requestId, attempt, state: closed(`call ${seq} is not in flight`) });
      return;
    }
    // One request waits per call: a newer one (or one from a newer attempt) supersedes it; the new hold replaces the old.
    this.closeWaiting(seq, () => true, "a newer request superseded it", false);
    const record: CallInputRecord = { requestId, attempt, message, requestedSchema, requestedAt: Date.now() };
    this.deps.journal.asked(seq, record, MAX_INPUT_RECORDS);
    this.requests.set(requestId, { seq, requestId, attempt, state: { state: "waiting" }, record });
    reportParked(this.deps.run, entry, "elicitationRequested");
    try {
      await this.deps.parking.hold(entry, "elicitationRequested", { requestId, attempt, message, requestedSchema });
    } catch (error) {
      // A run cancelled while it announces the request ends anyway; the request closes with its call.
      if (!isCancellation(error)) throw error;
    }
  }

  withdraw(report: CallInputWithdrawal): void {
    const request = this.requests.get(report.requestId);
    if (report.namespace === this.deps.namespace && request?.seq === report.seq)
      this.close(request, "its attempt withdrew it");
  }

  /** Throws (refusing the update) unless `requestId` is the request call `seq` waits on. */
  assertWaiting({ seq, requestId, answer }: CallInputAnswer): void {
    const request = this.requests.get(requestId);
    if (!request || request.seq !== seq || !this.isWaiting(request))
      throw new Error(`call ${seq} is not waiting for input ${requestId}`);
    if (!ANSWER_ACTIONS.has(answer.action)) throw new Error("an answer's action is accept, decline or cancel");
    if (answer.action === "accept" && (typeof answer.content !== "object" || answer.content === null))
      throw new Error("an accepted answer has content");
  }

  answer({ seq, requestId, answer }: CallInputAnswer): { seq: number } {
    const request = this.requests.get(requestId);
    if (!request) return { seq };
    request.state = { state: "answered", answer };
    if (request.record) {
      request.record.outcome = answer.action;
      if (answer.action === "accept") request.record.content = answer.content;
      request.record.endedAt = Date.now();
    }
    this.deps.parking.release(seq);
    return { seq };
  }

  /** Where a request stands, for the activity polling it (a query: reads only). */
  state(seq: number, requestId: string): CallInputState {
    const request = this.requests.get(requestId);
    const runState = this.deps.status.state;
    if (!request || request.seq !== seq)
      return ENDED.has(runState) ? closed(`the run is ${runState}`) : { state: "unknown" };
    if (request.state.state !== "waiting") return request.state;
    if (ENDED.has(runState)) return closed(`the run is ${runState}`);
    return this.isWaiting(request) ? request.state : closed(`call ${seq} is no longer waiting for it`);
  }

  /** The call's activity is over: what it asked can no longer be answered, and answers are dropped. */
  callEnded(seq: number): void {
    for (const request of this.requests.values()) {
      if (request.seq !== seq) continue;
      this.close(request, `call ${seq} ended`);
      if (request.state.state === "answered") request.state = closed(`call ${seq} ended`);
      delete request.record;
    }
  }

  /** The entry of the call a report is about, while that call is in flight (sent, or held for input). */
  private inFlight(report: { namespace: string; seq: number }): JournalEntry | undefined {
    if (report.namespace !== this.deps.namespace) return undefined;
    const entry = this.deps.journal.entry(report.seq);
    if (entry?.status === "running") return entry;
    return entry?.status === "parked" && this.deps.parking.lot.holdOf(entry.seq) ? entry : undefined;
  }

  private isWaiting(request: InputRequest): boolean {
    return (
      request.state.state === "waiting" &&
      this.deps.parking.lot.holdOf(request.seq)?.["requestId"] === request.requestId
    );
  }

  private closeWaiting(seq: number, which: (request: InputRequest) => boolean, reason: string, release = true): void {
    for (const request of this.requests.values())
      if (request.seq === seq && which(request)) this.close(request, reason, release);
  }

  private close(request: InputRequest, reason: string, release = true): void {
    if (request.state.state !== "waiting") return;
    const held = this.isWaiting(request);
    request.state = closed(reason);
    if (request.record) {
      request.record.outcome = "withdrawn";
      request.record.endedAt = Date.now();
    }
    if (held && release) this.deps.parking.release(request.seq);
  }
}

/** The signals, query and update through which calls in flight report and the harness answers. */
export function registerCallReportHandlers(desk: CallReportDesk): void {
  setHandler(callProgressSignal, (report) => desk.progress(report));
  setHandler(callInputRequestedSignal, (report) => desk.request(report));
  setHandler(callInputWithdrawnSignal, (report) => desk.withdraw(report));
  setHandler(getCallInputQuery, ({ seq, requestId }) => desk.state(seq, requestId));
  setHandler(answerCallInputUpdate, (answer) => desk.answer(answer), {
    validator: (answer) => desk.assertWaiting(answer),
  });
}
