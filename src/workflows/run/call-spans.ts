/**
 * Reports the run's spans to the worker's tracer through a sink. A run may stay open for days,
 * and a span is exported only once it ends, so the run's moments are spans of their own, sent
 * when they happen: the run's root (`rewind.run`, exported when the run starts, so every span
 * after it has its parent), a call parked (`park {reason}`) and the run's end (`rewind.run.end`).
 * Each call is one `execute_tool {tool}` span from issue to outcome, by the GenAI conventions:
 * tool, seq, attempts, policy and outcome — never arguments or results. Ids come from the run's
 * trace, so the spans of every attempt and of the tools themselves hang under them. Names stay
 * low-cardinality: run ids and seqs are attributes. Sinks issue no commands: nothing here is
 * patched, and a replay reports nothing again.
 */
import { proxySinks, workflowInfo } from "@temporalio/workflow";
import {
  HTTP_TOOL,
  type JournalEntry,
  idempotencyKey,
  callSpanId,
  formatTraceparent,
  parkSpanId,
  runEndSpanId,
  type RunTrace,
  type TracingSinks,
} from "../../shared/index.ts";
import type { RunInput, ToolPolicy } from "../../shared/index.ts";

const { tracing } = proxySinks<TracingSinks>();

export function callTraceparent(trace: RunTrace | undefined, seq: number): string | undefined {
  return trace ? formatTraceparent(trace.traceId, callSpanId(trace, seq)) : undefined;
}

/** How a tool is reached: `rewind.tool.kind`. */
function kindOf(run: RunInput, tool: string): string {
  if (tool === HTTP_TOOL) return "http";
  if (tool.startsWith("rewind.")) return "builtin";
  return run.toolset.hostTools[tool.split(".")[0] ?? ""] ? "host" : "mcp";
}

/** The root span, once, when the run's first execution starts: from the start request to its first workflow task. */
export function reportRunStarted(run: RunInput): void {
  const trace = run.trace;
  if (!trace) return;
  tracing.span({
    traceId: trace.traceId,
    spanId: trace.rootSpanId,
    ...(trace.parentSpanId ? { parentSpanId: trace.parentSpanId } : {}),
    name: "rewind.run",
    startMs: workflowInfo().startTime.getTime(),
    endMs: Date.now(),
    attributes: {
      "rewind.run.id": run.runId,
      "rewind.namespace": run.namespace,
      "rewind.toolset.id": run.toolsetId,
      ...(run.parentRunId ? { "rewind.run.parent_id": run.parentRunId } : {}),
      ...(run.fork ? { "rewind.run.forked_from": run.fork.parentRunId } : {}),
    },
  });
}

export function reportCallSpan(run: RunInput, entry: JournalEntry, policy: ToolPolicy | undefined): void {
  const trace = run.trace;
  if (!trace) return;
  const errorType = entry.status === "completed" ? undefined : (entry.error?.code ?? entry.status);
  tracing.span({
    traceId: trace.traceId,
    spanId: callSpanId(trace, entry.seq),
    parentSpanId: trace.rootSpanId,
    name: `execute_tool ${entry.tool}`,
    // From issue, so a wait for approval or for a place in the limits is inside the call.
    startMs: entry.issuedAt,
    endMs: entry.completedAt ?? Date.now(),
    attributes: {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": entry.tool,
      "gen_ai.tool.call.id": idempotencyKey(run.runId, entry.seq),
      "rewind.run.id": run.runId,
      "rewind.call.seq": entry.seq,
      "rewind.tool.kind": kindOf(run, entry.tool),
      "rewind.call.attempts": entry.attempts,
      "rewind.call.policy": policy?.onInterruption ?? "retry",
      "rewind.call.approval": policy?.approval ?? false,
      "rewind.call.outcome": errorType ?? "ok",
      ...(errorType === undefined ? {} : { "error.type": errorType }),
    },
    ...(errorType === undefined ? {} : { error: errorType }),
  });
}

/** A call parked (for approval, credentials, a changed schema, input): a moment under the call's span. */
export function reportParked(run: RunInput, entry: JournalEntry, reason: string): void {
  const trace = run.trace;
  if (!trace) return;
  const at = Date.now();
  tracing.span({
    traceId: trace.traceId,
    spanId: parkSpanId(trace, entry.seq, at),
    parentSpanId: callSpanId(trace, entry.seq),
    name: `park ${reason}`,
    startMs: at,
    endMs: at,
    attributes: {
      "rewind.run.id": run.runId,
      "rewind.call.seq": entry.seq,
      "gen_ai.tool.name": entry.tool,
      "rewind.park.reason": reason,
    },
  });
}

/** The run's end: a moment under its root, with its status (an error unless completed). */
export function reportRunSpan(
  trace: RunTrace | undefined,
  runId: string,
  startedAt: number,
  status: string,
  calls: number,
): void {
  if (!trace) return;
  const endMs = Date.now();
  tracing.span({
    traceId: trace.traceId,
    spanId: runEndSpanId(trace),
    parentSpanId: trace.rootSpanId,
    name: "rewind.run.end",
    startMs: endMs,
    endMs,
    attributes: {
      "rewind.run.id": runId,
      "rewind.run.status": status,
      "rewind.run.calls": calls,
      "rewind.run.duration_ms": Math.max(0, endMs - startedAt),
      ...(status === "completed" ? {} : { "error.type": status }),
    },
    ...(status === "completed" ? {} : { error: status }),
  });
}
