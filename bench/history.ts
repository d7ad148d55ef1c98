/**
 * Reads a run's workflow history back from Temporal — every execution of it, since long runs
 * continue as new — and summarizes it: events per call by type, payload bytes, and where the
 * wall time of a call goes between the server's timestamps (activity and workflow task queues,
 * the activity itself, the workflow task that includes the sandbox step).
 */
import type { Client, WorkflowHandle } from "@temporalio/client";
import { median } from "./stats.ts";

type History = Awaited<ReturnType<WorkflowHandle["fetchHistory"]>>;
type HistoryEvent = NonNullable<History["events"]>[number];

export interface HistorySummary {
  executions: number;
  events: number;
  eventsPerExecution: number[];
  /** Payload bytes of each execution's start event: its input (a continued run carries its journal in it). */
  startInputBytes: number[];
  /** Event counts by type (attribute name without `EventAttributes`), over all executions. */
  byType: Record<string, number>;
  /** Bytes of all payloads (inputs, results, markers, memo) in the history. */
  payloadBytes: number;
  /** Sum over the history of each phase's durations, in ms. */
  phases: {
    activityScheduleToStart: number;
    activityStartToClose: number;
    workflowTaskScheduleToStart: number;
    workflowTaskStartToClose: number;
  };
  /** Workflow tasks completed (each one activation round trip between server and worker). */
  workflowTasks: number;
  /** First event to last event, summed over executions, in ms. */
  spanMs: number;
  /** Workflow started → first activity scheduled (first execution), ms. */
  headMs: number;
  /** Last activity completed → the last event (run closed), in the last execution, ms. */
  tailMs: number;
}

/** Histories of every execution of a workflow id, first execution first. */
export async function fetchHistories(client: Client, workflowId: string): Promise<History[]> {
  const histories: History[] = [];
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
  while (runId) {
    const history: History = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    histories.unshift(history);
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return histories;
}

function typeOf(event: HistoryEvent): string {
  for (const [key, value] of Object.entries(event)) {
    if (key.endsWith("EventAttributes") && value) return key.slice(0, -"EventAttributes".length);
  }
  return "unknown";
}

function timeOf(event: HistoryEvent | undefined): number {
  const time = event?.eventTime;
  if (!time) return Number.NaN;
  return Number(String(time.seconds ?? 0)) * 1000 + (time.nanos ?? 0) / 1e6;
}

function idOf(value: unknown): number {
  return Number(String(value ?? 0));
}

/** Sums the byte length of every `data` field of a payload found anywhere in the event. */
function payloadBytes(value: unknown, depth = 0): number {
  if (depth > 12 || typeof value !== "object" || value === null) return 0;
  if (value instanceof Uint8Array) return 0;
  let total = 0;
  for (const [key, inner] of Object.entries(value)) {
    if (key === "data" && inner instanceof Uint8Array) total += inner.byteLength;
    else total += payloadBytes(inner, depth + 1);
  }
  return total;
}

export function summarizeHistories(histories: History[]): HistorySummary {
  const byType: Record<string, number> = {};
  const phases = {
    activityScheduleToStart: 0,
    activityStartToClose: 0,
    workflowTaskScheduleToStart: 0,
    workflowTaskStartToClose: 0,
  };
  let bytes = 0;
  let spanMs = 0;
  const eventsPerExecution: number[] = [];
  const startInputBytes: number[] = [];
  for (const history of histories) {
    const events = history.events ?? [];
    eventsPerExecution.push(events.length);
    startInputBytes.push(payloadBytes(events[0]));
    const byId = new Map<number, HistoryEvent>();
    for (const event of events) {
      byId.set(idOf(event.eventId), event);
      const type = typeOf(event);
      byType[type] = (byType[type] ?? 0) + 1;
      bytes += payloadBytes(event);
      const started = event.activityTaskStartedEventAttributes;
      if (started) phases.activityScheduleToStart += timeOf(event) - timeOf(byId.get(idOf(started.scheduledEventId)));
      const completed = event.activityTaskCompletedEventAttributes;
      if (completed) phases.activityStartToClose += timeOf(event) - timeOf(byId.get(idOf(completed.startedEventId)));
      const wftStarted = event.workflowTaskStartedEventAttributes;
      if (wftStarted) {
        // Started events carry no scheduled id; the scheduled event is the one just before.
        const scheduled = byId.get(idOf(event.eventId) - 1);
        if (scheduled?.workflowTaskScheduledEventAttributes)
          phases.workflowTaskScheduleToStart += timeOf(event) - timeOf(scheduled);
      }
      const wftCompleted = event.workflowTaskCompletedEventAttributes;
      if (wftCompleted)
        phases.workflowTaskStartToClose += timeOf(event) - timeOf(byId.get(idOf(wftCompleted.startedEventId)));
    }
    spanMs += timeOf(events.at(-1)) - timeOf(events[0]);
  }
  const firstEvents = histories[0]?.events ?? [];
  const lastEvents = histories.at(-1)?.events ?? [];
  const lastCompleted = lastEvents.findLast((e) => e.activityTaskCompletedEventAttributes);
  const headMs = timeOf(firstEvents.find((e) => e.activityTaskScheduledEventAttributes)) - timeOf(firstEvents[0]);
  const tailMs = timeOf(lastEvents.at(-1)) - timeOf(lastCompleted);
  return {
    executions: histories.length,
    events: eventsPerExecution.reduce((a, b) => a + b, 0),
    eventsPerExecution,
    startInputBytes,
    byType,
    payloadBytes: bytes,
    phases,
    workflowTasks: byType["workflowTaskCompleted"] ?? 0,
    spanMs,
    headMs,
    tailMs,
  };
}

export async function historyOf(client: Client, workflowId: string): Promise<HistorySummary> {
  return summarizeHistories(await fetchHistories(client, workflowId));
}

/**
 * One summary for several runs of the same kind: each figure is the median over the runs (the
 * phases each on their own), so a single slow or fast run does not speak for the rest; the
 * event counts by type and per execution are the run whose span is the median's.
 */
export function medianHistory(summaries: HistorySummary[]): HistorySummary {
  const typical = [...summaries].sort((a, b) => a.spanMs - b.spanMs)[Math.floor((summaries.length - 1) / 2)];
  if (!typical) throw new Error("medianHistory: no runs");
  const of = (pick: (s: HistorySummary) => number): number => median(summaries.map(pick));
  return {
    ...typical,
    events: of((s) => s.events),
    payloadBytes: of((s) => s.payloadBytes),
    phases: {
      activityScheduleToStart: of((s) => s.phases.activityScheduleToStart),
      activityStartToClose: of((s) => s.phases.activityStartToClose),
      workflowTaskScheduleToStart: of((s) => s.phases.workflowTaskScheduleToStart),
      workflowTaskStartToClose: of((s) => s.phases.workflowTaskStartToClose),
    },
    workflowTasks: of((s) => s.workflowTasks),
    spanMs: of((s) => s.spanMs),
    headMs: of((s) => s.headMs),
    tailMs: of((s) => s.tailMs),
  };
}

/** `medianHistory` of the given runs, read from Temporal. */
export async function medianHistoryOf(client: Client, workflowIds: readonly string[]): Promise<HistorySummary> {
  return medianHistory(await Promise.all(workflowIds.map((id) => historyOf(client, id))));
}
