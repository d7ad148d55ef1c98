/**
 * The one file that uses the OpenTelemetry SDK. Spans of calls and runs are reported by the
 * workflow (through a sink) once they end, with ids derived from the run's trace; an id
 * generator that hands out a chosen id for exactly the next span lets the SDK export them as
 * ordinary spans. Attempts are live spans of the activity that sends the call, and their
 * context is what a tool receives as `traceparent`. Without an exporter, nothing is recorded.
 */
import { context, SpanKind, SpanStatusCode, trace, type Attributes } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, RandomIdGenerator, SimpleSpanProcessor, type IdGenerator, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { formatTraceparent, parseTraceparent, type FinishedSpan } from "../shared/trace-context.ts";

export interface TracingOptions {
  /** Exporter for tests (e.g. InMemorySpanExporter); exported span by span. */
  exporter?: SpanExporter;
  /** OTLP/HTTP traces endpoint (from OTEL_EXPORTER_OTLP_*). */
  otlp?: { url: string; headers: Record<string, string> };
  serviceName: string;
}

export interface Attempt {
  /** The attempt span's context, to send to the tool. */
  traceparent: string;
  end(outcome: { ok: boolean; code?: string }): void;
}

export interface Tracing {
  readonly enabled: boolean;
  /** Starts the span of one attempt of a call, under the call's span. */
  startAttempt(callTraceparent: string | undefined, name: string, attributes: Attributes): Attempt | undefined;
  /** Exports a span the workflow finished (a call, or the run). */
  record(span: FinishedSpan): void;
  shutdown(): Promise<void>;
}

/** Random ids, except the next one when a span with a chosen id is being recorded. */
class ChosenIds implements IdGenerator {
  next: { traceId: string; spanId: string } | undefined;
  private readonly random = new RandomIdGenerator();
  generateTraceId(): string {
    return this.next?.traceId ?? this.random.generateTraceId();
  }
  generateSpanId(): string {
    const chosen = this.next?.spanId;
    this.next = undefined;
    return chosen ?? this.random.generateSpanId();
  }
}

export function createTracing(options: TracingOptions): Tracing {
  const exporter = options.exporter ?? (options.otlp ? new OTLPTraceExporter({ url: options.otlp.url, headers: options.otlp.headers }) : undefined);
  if (!exporter) {
    return { enabled: false, startAttempt: () => undefined, record: () => undefined, shutdown: async () => undefined };
  }
  const ids = new ChosenIds();
  const provider = new BasicTracerProvider({
    idGenerator: ids,
    resource: resourceFromAttributes({ "service.name": options.serviceName }),
    spanProcessors: [options.exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer("rewind");
  const parentContext = (traceparent: string | undefined) => {
    const parent = parseTraceparent(traceparent);
    return parent ? trace.setSpanContext(context.active(), { traceId: parent.traceId, spanId: parent.spanId, traceFlags: 1, isRemote: true }) : context.active();
  };

  return {
    enabled: true,
    startAttempt(callTraceparent, name, attributes) {
      if (!parseTraceparent(callTraceparent)) return undefined;
      const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parentContext(callTraceparent));
      const { traceId, spanId } = span.spanContext();
      return {
        traceparent: formatTraceparent(traceId, spanId),
        end(outcome) {
          span.setAttribute("rewind.outcome", outcome.code ?? (outcome.ok ? "ok" : "error"));
          if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR, ...(outcome.code ? { message: outcome.code } : {}) });
          span.end();
        },
      };
    },
    record(finished) {
      const parent = finished.parentSpanId ? formatTraceparent(finished.traceId, finished.parentSpanId) : undefined;
      ids.next = { traceId: finished.traceId, spanId: finished.spanId };
      const span = tracer.startSpan(finished.name, { startTime: finished.startMs, attributes: finished.attributes, root: !parent }, parentContext(parent));
      ids.next = undefined;
      if (finished.error) span.setStatus({ code: SpanStatusCode.ERROR, message: finished.error });
      span.end(finished.endMs);
    },
    shutdown: () => provider.shutdown(),
  };
}
