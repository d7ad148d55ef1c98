/**
 * Child-process entry that hosts both workers the bench compares: the Rewind worker
 * (`createRewindWorker`, exactly as `npm start` builds it) and the baseline's plain worker on its
 * own task queue and workflowsPath, each with External Storage on its own file store and the same
 * threshold. Keeping them together in one process gives both the same conditions, keeps their
 * memory apart from the bench's, and lets `--profile` CPU-profile them. When the start scenario
 * asks, it also runs the API beside the Rewind worker as `npm start` does (one connection, eager
 * start), and starts plain workflows eagerly on the plain worker's connection.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@temporalio/client";
import { Worker } from "@temporalio/worker";
import { startApi, type RunningApi } from "../src/cli/start-api.ts";
import { loadConfig, temporalEnvironment, temporalSettings } from "../src/config.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { createConsoleLogger } from "../src/cli/console-logger.ts";
import { DEFAULT_EAGER_CALLS, type Accelerators, type PayloadsConfig } from "../src/config.ts";
import { createMcpPool } from "../src/mcp/index.ts";
import { NO_METRICS, createPrometheusMetrics, type StepStart } from "../src/metrics/index.ts";
import { createRewindWorker } from "../src/worker/create-worker.ts";
import { installTemporalRuntime } from "../src/temporal/temporal-runtime.ts";
import { connectionSettings, connectNative } from "../src/temporal/index.ts";
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
  /** The configuration's eager calls, spare sessions and accelerators (`--accelerators-off`). */
  eagerCalls: number;
  spareSessionIdleMs: number;
  accelerators: Accelerators;
  cpuMsPerStep: number;
  /** The Rewind worker's payload store (the API's too). */
  payloads: PayloadsConfig;
  /** The plain worker's file store, with the same threshold. */
  plainPayloadsDir: string;
  /**
   * The API's environment, without the cluster's secrets (they are this process's environment):
   * `startEagerApi` starts one in this process, as `npm start` does.
   */
  apiEnv: Record<string, string>;
  /** On an existing cluster (`--temporal`): its TEMPORAL_* settings are also this process's environment's. */
  cluster: boolean;
}

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const BASELINE_WORKFLOWS = path.join(BENCH_DIR, "baseline", "workflows.ts");
const REPO_ROOT = path.resolve(BENCH_DIR, "..");

const options = JSON.parse(process.argv[2] ?? "{}") as WorkersOptions;
installTemporalRuntime(createConsoleLogger("warn", "temporal-sdk"), "WARN");
/** The API's settings; a cluster's secrets (an API key) are the environment's this process inherited. */
const apiEnv = options.cluster ? { ...temporalEnvironment(), ...options.apiEnv } : options.apiEnv;
/** How both workers reach Temporal: a cluster's TLS or API key among the settings. */
const temporal = connectionSettings(temporalSettings(apiEnv, REPO_ROOT), options.address);

/** Steps the sandbox took, cold (a replay from the journal) and warm: where a run's isolate was. */
const steps: Record<StepStart, number> = { cold: 0, warm: 0 };

const rewind = await createRewindWorker({
  ...temporal,
  namespace: options.namespace,
  taskQueue: options.rewindTaskQueue,
  sandbox: { memoryMb: options.memoryMb, cpuMsPerStep: options.cpuMsPerStep },
  warmIsolates: options.warmIsolates,
  eagerCalls: options.eagerCalls,
  spareSessionIdleMs: options.spareSessionIdleMs,
  accelerators: options.accelerators,
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
const plainConnection = await connectNative(temporal);
const plain = await Worker.create({
  connection: plainConnection,
  namespace: options.namespace,
  taskQueue: options.plainTaskQueue,
  workflowsPath: BASELINE_WORKFLOWS,
  activities: createPlainActivities(plainPool),
  dataConverter: plainDataConverter(options.plainPayloadsDir, options.payloads.thresholdBytes),
  maxCachedWorkflows: 1000,
  // The Rewind worker's eager dispatch, so neither side waits on matching the other skips.
  maxEagerActivityReservationsPerWorkflowTask: DEFAULT_EAGER_CALLS,
});
const running = Promise.all([rewind.run(), plain.run()]);

/** Starts plain workflows eagerly: its connection is the plain worker's, as the API's is the Rewind worker's. */
const plainEagerClient = new Client({
  connection: plainConnection,
  namespace: options.namespace,
  dataConverter: plainDataConverter(options.plainPayloadsDir, options.payloads.thresholdBytes),
});
/** The API `npm start` runs beside the worker, sharing its connection (eager start); started when asked. */
let eagerApi: Promise<RunningApi> | undefined;
const eagerApiMetrics = createPrometheusMetrics();

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
  async startEagerApi() {
    eagerApi ??= startApi(loadConfig(apiEnv, REPO_ROOT), options.address, undefined, silentLogger, {
      worker: rewind,
      metrics: eagerApiMetrics,
    });
    return { url: (await eagerApi).url };
  },
  /** How many runs the API beside the worker started eagerly, and how many not. */
  async eagerApiStarts() {
    const text = await eagerApiMetrics.scrape();
    const count = (start: string) =>
      Number(new RegExp(`^rewind_api_run_starts_total\\{start="${start}"\\} (\\S+)$`, "m").exec(text)?.[1] ?? 0);
    return { eager: count("eager"), queued: count("queued") };
  },
  /** Starts the plain workflow making `n` calls to `url`, eagerly; answers when the start was sent, on the bench's clock. */
  async startPlainEager(args: unknown) {
    const { id, url, n } = args as { id: string; url: string; n: number };
    const sentAt = performance.timeOrigin + performance.now();
    const handle = await plainEagerClient.workflow.start("plainCalls", {
      taskQueue: options.plainTaskQueue,
      workflowId: id,
      args: [{ url, n, width: 1, noop: false }],
      requestEagerStart: true,
    });
    return { sentAt, eagerlyStarted: handle.eagerlyStarted };
  },
  resetPeak() {
    peakRss = process.memoryUsage.rss();
    return null;
  },
  async stop() {
    clearInterval(sampler);
    if (eagerApi) await (await eagerApi).stop();
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
