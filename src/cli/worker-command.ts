/**
 * `rewind worker`: a worker on the configured cluster, for as long as it is not told to stop.
 * Started while nothing answers at TEMPORAL_ADDRESS, it waits for the cluster (cluster-wait.ts);
 * a stop (SIGINT, SIGTERM, its wrapper's death: stop-signals.ts) ends that wait at once, or drains
 * the running worker, which says so in its last line.
 */
import type { Config } from "../config.ts";
import type { Logger } from "../shared/index.ts";
import type { RewindWorker } from "../worker/index.ts";
import { clusterWait } from "./cluster-wait-options.ts";
import { startWorker } from "./start-worker.ts";
import { onStopSignal } from "./stop-signals.ts";

export async function runWorker(config: Config, address: string, logger: Logger): Promise<void> {
  if (!config.api.publicUrlSet) {
    logger.warn(
      `REWIND_PUBLIC_URL is not set: the URLs webhook(name) gives scripts on this worker start with ${config.api.publicUrl} (REWIND_HOST:REWIND_PORT), which works only if harnesses reach the API there; set it to the URL harnesses reach the API at`,
    );
  }
  const stopping = new AbortController();
  let worker: RewindWorker | undefined;
  onStopSignal((signal) => {
    logger.info(`received ${signal}: ${worker ? "draining the worker" : "stopping"}`);
    stopping.abort(new Error(`stopped by ${signal}`));
    void worker?.shutdown();
  });
  try {
    worker = await startWorker(config, address, logger, {
      clusterWait: clusterWait("the worker", config, logger, stopping.signal),
    });
  } catch (error) {
    if (!stopping.signal.aborted) throw error;
    logger.info("stopped before the worker started");
    return;
  }
  const deployment = config.temporal.deployment;
  logger.info("worker started", {
    taskQueue: config.temporal.taskQueue,
    deploymentVersion: deployment ? `${deployment.name}.${deployment.buildId}` : "unversioned",
    ...(deployment ? { versioning: deployment.defaultBehavior } : {}),
  });
  const running = worker.run();
  // Told to stop while it was being created: it drains as soon as it runs.
  if (stopping.signal.aborted) void worker.shutdown();
  await running;
  logger.info("worker drained and stopped");
}
