/**
 * How the commands that need the cluster wait for one that does not answer yet
 * (src/temporal/cluster-wait.ts): for REWIND_CONNECT_TIMEOUT (default: as long as it takes), one
 * line per attempt. `rewind worker` and `rewind api` log theirs until told to stop; `rewind setup`
 * and `rewind payloads prune` (a deploy step, a cron job) write theirs to stderr.
 */
import type { Config } from "../config.ts";
import type { Logger } from "../shared/index.ts";
import {
  connectClient,
  waitForCluster,
  type ClusterWaitOptions,
  type TemporalConnectionSettings,
} from "../temporal/index.ts";

export function clusterWait(waiter: string, config: Config, logger: Logger, signal: AbortSignal): ClusterWaitOptions {
  return { waiter, timeoutMs: config.temporal.connectTimeoutMs, log: (line) => logger.warn(line), signal };
}

/** A one-shot command's client connection, once the cluster answers; `waiter` names the command in the lines. */
export function connectWhenClusterAnswers(
  waiter: string,
  config: Config,
  settings: TemporalConnectionSettings,
): ReturnType<typeof connectClient> {
  return waitForCluster(settings, () => connectClient(settings), {
    waiter,
    timeoutMs: config.temporal.connectTimeoutMs,
    log: (line) => process.stderr.write(`rewind: ${line}\n`),
  });
}
