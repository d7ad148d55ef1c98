/** OpenTelemetry tracing of runs and calls, exported over OTLP when configured. */
export { createTracing, type Attempt as AttemptSpan, type Tracing } from "./tracing.ts";
