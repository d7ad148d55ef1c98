/**
 * How `rewind worker` and `rewind api` wait for a cluster that does not answer yet
 * (src/temporal/cluster-wait.ts): for REWIND_CONNECT_TIMEOUT (default: as long as it takes),
 * one warning line per attempt, until told to stop.
 */
import type { Config } from "../config.ts";
import type { Logger } from "../shared/index.ts";
import type { ClusterWaitOptions } from "../temporal/index.ts";

export function clusterWait(waiter: string, config: Config, logger: Logger, signal: AbortSignal): ClusterWaitOptions {
  return { waiter, timeoutMs: config.temporal.connectTimeoutMs, log: (line) => logger.warn(line), signal };
}
