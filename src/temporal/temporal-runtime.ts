/**
 * Routes the Temporal SDK's own log lines (worker state, failed activities and workflows)
 * through Rewind's logger at a chosen level, and, for a process that serves metrics, has the
 * SDK's core export its runtime metrics (workflow and activity tasks, polls, sticky cache,
 * requests) in Prometheus' format on a loopback port of its own, which Rewind's metrics endpoint
 * reads and appends. The SDK's runtime is process-wide and can be installed once, before the
 * first worker or connection; later calls change nothing (tests share a process: the first
 * install decides whether the SDK's metrics are there).
 */
import { DefaultLogger, Runtime, type LogLevel } from "@temporalio/worker";
// Only the port helper, not the dev server: the SDK's host-tool worker imports this file too.
import { getFreePort } from "../dev/free-port.ts";
import type { Logger } from "../shared/index.ts";

let installed = false;
let sdkMetricsUrl: string | undefined;

function sdkLoggerFor(logger: Logger, level: LogLevel): DefaultLogger {
  return new DefaultLogger(level, (entry) => {
    const fields = { ...(entry.meta ?? {}), sdk: true };
    const message = entry.message;
    if (entry.level === "ERROR") logger.error(message, fields);
    else if (entry.level === "WARN") logger.warn(message, fields);
    else if (entry.level === "INFO") logger.info(message, fields);
    else logger.debug(message, fields);
  });
}

export function installTemporalRuntime(logger: Logger, level: LogLevel): void {
  if (installed) return;
  installed = true;
  try {
    Runtime.install({ logger: sdkLoggerFor(logger, level) });
  } catch {
    // Someone (a test harness, an embedder) installed a runtime first: theirs stays.
  }
}

/**
 * Installs the runtime with the SDK's Prometheus exporter on `127.0.0.1:<free port>`, named in
 * Prometheus' conventions (seconds, `_total`). Answers whether the SDK's metrics are available,
 * which they are not when the runtime was installed before without them.
 */
export async function installTemporalRuntimeWithMetrics(logger: Logger, level: LogLevel): Promise<boolean> {
  if (installed) return sdkMetricsUrl !== undefined;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const bindAddress = `127.0.0.1:${await getFreePort()}`;
    // Another caller may have installed one while the port was being found.
    if (installed) return sdkMetricsUrl !== undefined;
    try {
      Runtime.install({
        logger: sdkLoggerFor(logger, level),
        telemetryOptions: {
          metrics: {
            prometheus: { bindAddress, countersTotalSuffix: true, unitSuffix: true, useSecondsForDurations: true },
          },
        },
      });
      installed = true;
      sdkMetricsUrl = `http://${bindAddress}/metrics`;
      return true;
    } catch (error) {
      // The port was taken between finding it and binding it: try another.
      if (/address already in use/i.test(String(error)) && attempt < 3) continue;
      logger.warn("the Temporal SDK's metrics are not available", { error: String(error) });
      installTemporalRuntime(logger, level);
      return false;
    }
  }
  return false;
}

/** Where the SDK's core serves its metrics (loopback), when the runtime was installed with them. */
export function temporalSdkMetricsUrl(): string | undefined {
  return sdkMetricsUrl;
}
