/**
 * `rewind api`: the HTTP API on the configured cluster, until it is told to stop. Started while
 * nothing answers at TEMPORAL_ADDRESS, it listens at once (`/readyz` answers 503) and waits for the
 * cluster (cluster-wait.ts); a stop (SIGINT, SIGTERM, its wrapper's death: stop-signals.ts) ends
 * that wait, or stops the running API.
 */
import type { Config } from "../config.ts";
import type { Logger } from "../shared/index.ts";
import { clusterWait } from "./cluster-wait-options.ts";
import { startApi, type RunningApi } from "./start-api.ts";
import { onStopSignal } from "./stop-signals.ts";

export async function runApi(config: Config, address: string, logger: Logger): Promise<void> {
  const stopping = new AbortController();
  let api: RunningApi | undefined;
  const stop = (running: RunningApi) => void running.stop().then(() => logger.info("API stopped"));
  onStopSignal((signal) => {
    logger.info(`received ${signal}: stopping the API`);
    stopping.abort(new Error(`stopped by ${signal}`));
    if (api) stop(api);
  });
  try {
    api = await startApi(config, address, config.temporal.uiUrl, logger, {
      clusterWait: clusterWait("the API", config, logger, stopping.signal),
    });
  } catch (error) {
    if (!stopping.signal.aborted) throw error;
    logger.info("stopped before the API was ready");
    return;
  }
  process.stdout.write(`Rewind API ${api.url}\n`);
  // Told to stop while it was being started: it stops now.
  if (stopping.signal.aborted) stop(api);
}
