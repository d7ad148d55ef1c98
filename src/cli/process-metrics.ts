/**
 * The process's metrics: one registry for whatever runs in it (`rewind worker`, `rewind api`,
 * or both under `rewind dev`), with the process's own CPU and memory and the Temporal SDK's
 * runtime metrics, served by the listener REWIND_METRICS_PORT opens (once, however many parts
 * ask) and by the API's `GET /metrics`.
 */
import type { Config } from "../config.ts";
import { createPrometheusMetrics, startMetricsServer, type PrometheusMetrics } from "../metrics/index.ts";
import type { Logger } from "../shared/index.ts";
import { temporalSdkMetricsUrl } from "../temporal/index.ts";

let shared: Promise<PrometheusMetrics> | undefined;

export function processMetrics(config: Config, logger: Logger): Promise<PrometheusMetrics> {
  shared ??= (async () => {
    const metrics = createPrometheusMetrics({ processMetrics: true, sdkMetricsUrl: temporalSdkMetricsUrl });
    const { port, address } = config.metrics;
    if (port !== undefined) {
      const server = await startMetricsServer({
        host: address,
        port,
        contentType: metrics.contentType,
        scrape: () => metrics.scrape(),
        onError: (error) => logger.warn("a metrics scrape failed", { error: String(error) }),
      });
      logger.info("serving metrics", { url: server.url });
    }
    return metrics;
  })();
  return shared;
}
