/**
 * W3C trace context for runs: a run is one trace, each call one span under the run's root span.
 * Call span ids are derived from the trace id and the seq, so every attempt, replay and
 * continue-as-new of a call names the same span without storing it. Workflow-safe (no crypto).
 */

/** What a run carries: its trace, its root span, and the caller's span when the start had one. */
import type { Sinks } from "@temporalio/workflow";

export interface RunTrace {
  traceId: string;
  rootSpanId: string;
  parentSpanId?: string;
}

/**
 * FNV-1a, 64 bits, as 16 hex digits: stable, cheap, and never all zeros for our inputs.
 * Computed on four 16-bit limbs with plain numbers: BigInt arithmetic costs ~50× more per
 * character, and this runs in the workflow for every call.
 */
function fnv64(text: string): string {
  // offset basis 0xcbf29ce484222325; prime 0x100000001b3 = 0x100 << 32 | 0x1b3.
  let h0 = 0x2325, h1 = 0x8422, h2 = 0x9ce4, h3 = 0xcbf2;
  for (let i = 0; i < text.length; i++) {
    h0 ^= text.charCodeAt(i) & 0xffff;
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3 + (t0 >>> 16);
    const t2 = h2 * 0x1b3 + h0 * 0x100 + (t1 >>> 16);
    const t3 = h3 * 0x1b3 + h1 * 0x100 + (t2 >>> 16);
    h0 = t0 & 0xffff;
    h1 = t1 & 0xffff;
    h2 = t2 & 0xffff;
    h3 = t3 & 0xffff;
  }
  if ((h0 | h1 | h2 | h3) === 0) h0 = 1;
  return [h3, h2, h1, h0].map((limb) => limb.toString(16).padStart(4, "0")).join("");
}

export function callSpanId(trace: RunTrace, seq: number): string {
  return fnv64(`${trace.traceId}/${trace.rootSpanId}/call/${seq}`);
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
