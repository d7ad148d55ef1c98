/** The Rewind worker: the run workflows' bundle, the activities and their dependencies, on one task queue. */
export { createRewindWorker, type RewindWorker } from "./create-worker.ts";
export { REPLAY_SINKS } from "./replay-sinks.ts";
