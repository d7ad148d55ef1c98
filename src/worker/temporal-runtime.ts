/**
 * Routes the Temporal SDK's own log lines (worker state, failed activities and workflows)
 * through Rewind's logger at a chosen level. The SDK's runtime is process-wide and can be
 * installed once, before the first worker or connection; later calls change nothing.
 */
import { DefaultLogger, Runtime, type LogLevel } from "@temporalio/worker";
import type { Logger } from "../shared/logger.ts";

let installed = false;

export function installTemporalRuntime(logger: Logger, level: LogLevel): void {
  if (installed) return;
  installed = true;
  const sdkLogger = new DefaultLogger(level, (entry) => {
    const fields = { ...(entry.meta ?? {}), sdk: true };
    const message = entry.message;
    if (entry.level === "ERROR") logger.error(message, fields);
    else if (entry.level === "WARN") logger.warn(message, fields);
    else if (entry.level === "INFO") logger.info(message, fields);
    else logger.debug(message, fields);
  });
  try {
    Runtime.install({ logger: sdkLogger });
  } catch {
    // Someone (a test harness, an embedder) installed a runtime first: theirs stays.
  }
}
