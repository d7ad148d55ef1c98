/**
 * W3C trace context for runs: a run is one trace, each call one span under the run's root span.
 * Call span ids are derived from the trace id and the seq, so every attempt, replay and
 * continue-as-new of a call names the same span without storing it; the run's end and a call's
 * parkings are derived the same way. Workflow-safe (no crypto).
 */

/** What a run carries: its trace, its root span, and the caller's span when the start had one. */
import type { Sinks } from "@temporalio/workflow";
import { fnv64 } from "./fnv.ts";

export interface RunTrace {
  traceId: string;
  rootSpanId: string;
  parentSpanId?: string;
}

export function callSpanId(trace: RunTrace, seq: number): string {
  return fnv64(`${trace.traceId}/${trace.rootSpanId}/call/${seq}`);
}

/** The span that marks the end of the run (a child of its root). */
export function runEndSpanId(trace: RunTrace): string {
  return fnv64(`${trace.traceId}/${trace.rootSpanId}/end`);
}

/** The span that marks a call parked at `at` (epoch ms; a call parks at most once a moment). */
export function parkSpanId(trace: RunTrace, seq: number, at: number): string {
  return fnv64(`${trace.traceId}/${trace.rootSpanId}/call/${seq}/park/${at}`);
}

export function formatTraceparent(traceId: string, spanId: string): string {
  return `00-${traceId}-${spanId}-01`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

export function parseTraceparent(value: string | undefined): { traceId: string; spanId: string } | undefined {
  const match = value ? TRACEPARENT.exec(value.trim().toLowerCase()) : null;
  if (!match || /^0+$/.test(match[1] ?? "") || /^0+$/.test(match[2] ?? "")) return undefined;
  return { traceId: match[1] as string, spanId: match[2] as string };
}

/** A span the workflow reports once it knows its times; the worker exports it (sinks). */
export interface FinishedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  error?: string;
}

/** The workflow's sink for finished spans (Temporal sinks: not called again on replay). */
export interface TracingSinks extends Sinks {
  tracing: { span(span: FinishedSpan): void };
}
