/**
 * Reports the run's spans to the worker's tracer through a sink: one span per call (named by
 * its tool, with seq, attempts, policy and outcome — never arguments or results) and one for
 * the run. Their ids come from the run's trace, so the spans of every attempt and of the tools
 * themselves hang under them.
 */
import { proxySinks } from "@temporalio/workflow";
import type { JournalEntry } from "../shared/journal.ts";
import { callSpanId, formatTraceparent, type RunTrace, type TracingSinks } from "../shared/trace-context.ts";
import type { ToolPolicy } from "../shared/toolset.ts";

const { tracing } = proxySinks<TracingSinks>();

export function callTraceparent(trace: RunTrace | undefined, seq: number): string | undefined {
  return trace ? formatTraceparent(trace.traceId, callSpanId(trace, seq)) : undefined;
}

export function reportCallSpan(trace: RunTrace | undefined, entry: JournalEntry, policy: ToolPolicy | undefined): void {
  if (!trace) return;
  tracing.span({
    traceId: trace.traceId,
    spanId: callSpanId(trace, entry.seq),
    parentSpanId: trace.rootSpanId,
    name: `call ${entry.tool}`,
    startMs: entry.startedAt ?? entry.issuedAt,
    endMs: entry.completedAt ?? Date.now(),
    attributes: {
      "rewind.tool": entry.tool,
      "rewind.seq": entry.seq,
      "rewind.attempts": entry.attempts,
      "rewind.policy": policy?.onInterruption ?? "retry",
      "rewind.approval": policy?.approval ?? false,
      "rewind.outcome": entry.status === "completed" ? "ok" : entry.error?.code ?? entry.status,
    },
    ...(entry.error ? { error: entry.error.code } : {}),
  });
}

export function reportRunSpan(trace: RunTrace | undefined, runId: string, startedAt: number, status: string, calls: number): void {
  if (!trace) return;
  tracing.span({
    traceId: trace.traceId,
    spanId: trace.rootSpanId,
    ...(trace.parentSpanId ? { parentSpanId: trace.parentSpanId } : {}),
    name: `run ${runId}`,
    startMs: startedAt,
    endMs: Date.now(),
    attributes: { "rewind.run_id": runId, "rewind.status": status, "rewind.calls": calls },
    ...(status === "completed" ? {} : { error: status }),
  });
}
