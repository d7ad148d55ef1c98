/**
 * Starts the Rewind worker from the configuration: the process-level wrapper around
 * createRewindWorker that the `dev` and `worker` commands share.
 */
import path from "node:path";
import type { Config } from "../config.ts";
import { createRewindWorker, type RewindWorker } from "../worker/create-worker.ts";

export async function startWorker(config: Config, temporalAddress: string): Promise<RewindWorker> {
  return createRewindWorker({
    address: temporalAddress,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    sandbox: config.sandbox,
    warmIsolates: config.warmIsolates,
    cacheDir: path.join(config.stateDir, "cache"),
  });
}
