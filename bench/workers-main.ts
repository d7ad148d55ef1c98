/**
 * Child-process entry that hosts both workers the bench compares: the Rewind worker
 * (`createRewindWorker`, exactly as `npm start` builds it) and the baseline's plain worker on its
 * own task queue and workflowsPath, each with External Storage on its own file store and the same
 * threshold. Keeping them together in one process gives both the same conditions, keeps their
 * memory apart from the bench's, and lets `--profile` CPU-profile them.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { NativeConnection, Worker } from "@temporalio/worker";
import { createConsoleLogger } from "../src/cli/console-logger.ts";
import type { PayloadsConfig } from "../src/config.ts";
import { createMcpPool } from "../src/mcp/index.ts";
import { NO_METRICS, type StepStart } from "../src/metrics/index.ts";
import { createRewindWorker } from "../src/worker/create-worker.ts";
import { installTemporalRuntime } from "../src/temporal/temporal-runtime.ts";
import { createPlainActivities } from "./baseline/activities.ts";
import { plainDataConverter } from "./baseline/data-converter.ts";
import { announceReady, serveIpc } from "./ipc.ts";

export interface WorkersOptions {
  address: string;
  namespace: string;
  rewindTaskQueue: string;
  plainTaskQueue: string;
  cacheDir: string;
  publicUrl: string;
  warmIsolates: number;
  memoryMb: number;
  cpuMsPerStep: number;
  /** The Rewind worker's payload store (the API's too). */
  payloads: PayloadsConfig;
  /** The plain worker's file store, with the same threshold. */
  plainPayloadsDir: string;
}

const BASELINE_WORKFLOWS = path.join(path.dirname(fileURLToPath(import.meta.url)), "baseline", "workflows.ts");

const options = JSON.parse(process.argv[2] ?? "{}") as WorkersOptions;
installTemporalRuntime(createConsoleLogger("warn", "temporal-sdk"), "WARN");

/** Steps the sandbox took, cold (a replay from the journal) and warm: where a run's isolate was. */
const steps: Record<StepStart, number> = { cold: 0, warm: 0 };

const rewind = await createRewindWorker({
  address: options.address,
  namespace: options.namespace,
  taskQueue: options.rewindTaskQueue,
  sandbox: { memoryMb: options.memoryMb, cpuMsPerStep: options.cpuMsPerStep },
  warmIsolates: options.warmIsolates,
  cacheDir: options.cacheDir,
  secretKey: Buffer.alloc(32, 42),
  publicUrl: options.publicUrl,
  payloads: options.payloads,
  metrics: {
    ...NO_METRICS,
    step(start) {
      steps[start] += 1;
    },
  },
});
const plainPool = createMcpPool({});
const plainConnection = await NativeConnection.connect({ address: options.address });
const plain = await Worker.create({
  connection: plainConnection,
  namespace: options.namespace,
  taskQueue: options.plainTaskQueue,
  workflowsPath: BASELINE_WORKFLOWS,
  activities: createPlainActivities(plainPool),
  dataConverter: plainDataConverter(options.plainPayloadsDir, options.payloads.thresholdBytes),
  maxCachedWorkflows: 1000,
});
const running = Promise.all([rewind.run(), plain.run()]);

let peakRss = process.memoryUsage.rss();
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
}, 100);

serveIpc({
  memory() {
    const usage = process.memoryUsage();
    peakRss = Math.max(peakRss, usage.rss);
    return {
      rss: usage.rss,
      peakRss,
      heapUsed: usage.heapUsed,
      heapTotal: usage.heapTotal,
      external: usage.external,
      warmIsolates: rewind.sandbox.warmCount,
    };
  },
  steps() {
    return { ...steps };
  },
  resetPeak() {
    peakRss = process.memoryUsage.rss();
    return null;
  },
  async stop() {
    clearInterval(sampler);
    if (plain.getState() === "RUNNING") plain.shutdown();
    await rewind.shutdown();
    await running;
    await plainPool.close();
    await plainConnection.close();
    // Exit normally (not by signal) so `--cpu-prof` writes its profile.
    setImmediate(() => process.exit(0));
    return null;
  },
});
process.on("disconnect", () => process.exit(0));
announceReady({ pid: process.pid });
