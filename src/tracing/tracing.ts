/**
 * The one file that uses the OpenTelemetry SDK. Spans of runs and calls are reported by the
 * workflow (through a sink) with ids derived from the run's trace; an id generator that hands
 * out a chosen id for exactly the next span lets the SDK export them as ordinary spans.
 * Attempts are live CLIENT spans of the activity that sends the call (`tools/call {tool}` for
 * MCP, `{method}` for http), and their context is what a tool receives as `traceparent`.
 * Every span carries the process's resource: service name, version and instance id. Without an
 * exporter, nothing is recorded.
 */
import { randomUUID } from "node:crypto";
import { context, SpanKind, SpanStatusCode, trace, type Attributes } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  RandomIdGenerator,
  SimpleSpanProcessor,
  type IdGenerator,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import packageJson from "../../package.json" with { type: "json" };
import { formatTraceparent, parseTraceparent, type FinishedSpan } from "../shared/index.ts";
import { createOtlpExporter, type OtlpOptions } from "./otlp-exporter.ts";

/** `service.instance.id`: one per process, whatever number of tracers it makes (dev runs API and worker together). */
const INSTANCE_ID = randomUUID();

export interface TracingOptions {
  /** Exporter for tests (e.g. InMemorySpanExporter); exported span by span. */
  exporter?: SpanExporter;
  /** OTLP endpoint, headers and protocol (from OTEL_EXPORTER_OTLP_*). */
  otlp?: OtlpOptions;
  serviceName: string;
  /** `service.version`. Default: this package's version. */
  serviceVersion?: string;
}

export interface Attempt {
  /** The attempt span's context, to send to the tool. */
  traceparent: string;
  /** Adds what became known while the attempt ran (its MCP session, the response's status). */
  annotate(attributes: Attributes): void;
  /** Ends the span; with `errorType` (`error.type`: a low-cardinality class of failure) it is an error span. */
  end(outcome?: { errorType?: string }): void;
}

export interface Tracing {
  readonly enabled: boolean;
  /** Starts the CLIENT span of one attempt of a call, under the call's span. */
  startAttempt(callTraceparent: string | undefined, name: string, attributes: Attributes): Attempt | undefined;
  /** Exports a span the workflow finished (a call, or the run). */
  record(span: FinishedSpan): void;
  shutdown(): Promise<void>;
}

/**
 * Random ids, except while a span with chosen ids is being started (`next`, set just around the
 * call). The SDK asks for the span id first and for a trace id only for a root span, so the
 * choice stays until the caller clears it.
 */
class ChosenIds implements IdGenerator {
  next: { traceId: string; spanId: string } | undefined;
  private readonly random = new RandomIdGenerator();
  generateTraceId(): string {
    return this.next?.traceId ?? this.random.generateTraceId();
  }
  generateSpanId(): string {
    return this.next?.spanId ?? this.random.generateSpanId();
  }
}

export function createTracing(options: TracingOptions): Tracing {
  const exporter = options.exporter ?? (options.otlp ? createOtlpExporter(options.otlp) : undefined);
  if (!exporter) {
    return { enabled: false, startAttempt: () => undefined, record: () => undefined, shutdown: async () => undefined };
  }
  const ids = new ChosenIds();
  const provider = new BasicTracerProvider({
    idGenerator: ids,
    resource: resourceFromAttributes({
      "service.name": options.serviceName,
      "service.version": options.serviceVersion ?? packageJson.version,
      "service.instance.id": INSTANCE_ID,
    }),
    spanProcessors: [options.exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer("rewind");
  const parentContext = (traceparent: string | undefined) => {
    const parent = parseTraceparent(traceparent);
    return parent
      ? trace.setSpanContext(context.active(), {
          traceId: parent.traceId,
          spanId: parent.spanId,
          traceFlags: 1,
          isRemote: true,
        })
      : context.active();
  };

  return {
    enabled: true,
    startAttempt(callTraceparent, name, attributes) {
      if (!parseTraceparent(callTraceparent)) return undefined;
      const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parentContext(callTraceparent));
      const { traceId, spanId } = span.spanContext();
      return {
        traceparent: formatTraceparent(traceId, spanId),
        annotate(more) {
          span.setAttributes(more);
        },
        end(outcome = {}) {
          if (outcome.errorType !== undefined) {
            span.setAttribute("error.type", outcome.errorType);
            span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.errorType });
          }
          span.end();
        },
      };
    },
    record(finished) {
      const parent = finished.parentSpanId ? formatTraceparent(finished.traceId, finished.parentSpanId) : undefined;
      ids.next = { traceId: finished.traceId, spanId: finished.spanId };
      let span;
      try {
        span = tracer.startSpan(
          finished.name,
          { startTime: finished.startMs, attributes: finished.attributes, root: !parent },
          parentContext(parent),
        );
      } finally {
        ids.next = undefined;
      }
      if (finished.error) span.setStatus({ code: SpanStatusCode.ERROR, message: finished.error });
      span.end(finished.endMs);
    },
    shutdown: () => provider.shutdown(),
  };
}
