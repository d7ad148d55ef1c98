/** Rewind's metrics: what components record, the Prometheus registry, and its listener. */
export {
  NO_METRICS,
  type CallKind,
  type CallMetrics,
  type McpPoolGauges,
  type OpenRunCounts,
  type PayloadMetrics,
  type RewindMetrics,
  type RunMetrics,
  type RunOutcome,
  type RunStartKind,
  type SandboxGauges,
  type StartMetrics,
  type StepMetrics,
  type StepStart,
} from "./metrics.ts";
export { createPrometheusMetrics, type PrometheusMetrics, type PrometheusMetricsOptions } from "./prometheus.ts";
export { startMetricsServer, type MetricsServer, type MetricsServerOptions } from "./metrics-server.ts";
