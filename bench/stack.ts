/**
 * Starts everything one bench run needs and stops it again: an in-memory, headless Temporal dev
 * server on a free port (or, with `cluster`, none: the cluster named is used as it is), the MCP
 * server (child process), the Rewind API (in this process, as `npm start` runs it), both workers
 * (child process), Temporal clients, a toolset registered with the MCP server, and an MCP pool for
 * the direct calls. Rewind (API and worker) and the plain worker each keep payloads over the
 * threshold in a file store of their own, in a folder under .rewind/ made for this run and
 * removed when it stops. A scenario may start a second workers' process on the same task queues.
 * Its task queues are its own; on a cluster, what is still open on them when it stops (the
 * toolsets' records, a run a scenario gave up on) is terminated.
 */
import { fork, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@temporalio/client";
import { connectClient } from "../src/temporal/index.ts";
import { startApi, type RunningApi } from "../src/cli/start-api.ts";
import { loadConfig, type Config } from "../src/config.ts";
import {
  findOrInstallTemporalCli,
  loadDevServerConfig,
  startDevServer,
  startOnFreePort,
  type DevServer,
} from "../src/dev/index.ts";
import { connectionSettings } from "../src/temporal/index.ts";
import { terminateOpenWorkflows } from "../test/helpers/task-queue-cleanup.ts";
import { createMcpPool, type McpPool } from "../src/mcp/index.ts";
import { createExternalStorage, rewindDataConverter } from "../src/payloads/external-storage.ts";
import { silentLogger } from "../src/shared/logger.ts";
import { plainDataConverter } from "./baseline/data-converter.ts";
import { ipcClient, waitForReady, type IpcClient } from "./ipc.ts";
import { findPid, findPids, type StackPids } from "./process-cpu.ts";
import type { WorkersOptions } from "./workers-main.ts";

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(BENCH_DIR, "..");

export interface StackOptions {
  /** CPU-profile the workers' process into this folder. */
  profileDir?: string | undefined;
  /** REWIND_ACCELERATORS_OFF for Rewind's API and worker (`--accelerators-off`); default: none. */
  acceleratorsOff?: string;
  /**
   * An existing cluster (`--temporal`, `--namespace`): its TEMPORAL_* settings, as every process
   * of the bench gets them. Unset: a dev server of the bench's own.
   */
  cluster?: { env: Record<string, string> } | undefined;
  log(line: string): void;
}

export interface WorkerMemory {
  rss: number;
  peakRss: number;
  heapUsed: number;
  /** The main thread's V8 heap as committed (used plus garbage and free pages). */
  heapTotal: number;
  external: number;
  warmIsolates: number;
}

export interface BenchStack {
  address: string;
  config: Config;
  api: RunningApi;
  /** Reads Rewind's runs (with Rewind's payload store, as the API does) and any history. */
  client: Client;
  /** Starts the plain workflows and reads their results: the plain worker's External Storage. */
  plainClient: Client;
  /** The file stores: Rewind's (its API and worker) and the plain worker's. */
  payloadDirs: { rewind: string; plain: string };
  mcpUrl: string;
  toolsetId: string;
  plainTaskQueue: string;
  /** Pool for the calls made directly, without Temporal. */
  directPool: McpPool;
  mcp: IpcClient;
  workers: IpcClient;
  workersPid: number;
  /**
   * Processes of the stack, for CPU accounting (Temporal's only where /proc can find it: the dev
   * server, or the services of a cluster on this machine).
   */
  pids: StackPids;
  /** Starts one more workers' process serving the same task queues (Rewind's and the plain one). */
  addWorkers(): Promise<WorkersProcess>;
  stop(): Promise<void>;
}

/** A workers' process (Rewind worker and plain worker); stopping it twice is harmless. */
export interface WorkersProcess {
  workers: IpcClient;
  pid: number;
  stop(): Promise<void>;
}

const CHILD_ARGS = ["--no-node-snapshot", "--disable-warning=ExperimentalWarning"];

function forkChild(file: string, args: string[], execArgv: string[]): { child: ChildProcess; output: () => string } {
  const child = fork(path.join(BENCH_DIR, file), args, {
    execArgv: [...CHILD_ARGS, ...execArgv],
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    cwd: REPO_ROOT,
  });
  let tail = "";
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-8000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  return { child, output: () => tail };
}

/** A headless, in-memory dev server on a free port. */
async function startBenchDevServer(stateDir: string, log: (line: string) => void): Promise<DevServer> {
  const cliPath = await findOrInstallTemporalCli({ stateDir, log });
  const devConfig = await loadDevServerConfig(path.join(REPO_ROOT, "temporal-dev.yml"));
  return startOnFreePort((port) =>
    startDevServer({ cliPath, config: devConfig, port, uiPort: false, dbFile: undefined, log }),
  );
}

export async function startBenchStack(options: StackOptions): Promise<BenchStack> {
  const stateDir = path.join(REPO_ROOT, ".rewind");
  const server = options.cluster ? undefined : await startBenchDevServer(stateDir, options.log);
  const temporalEnv = options.cluster?.env ?? { TEMPORAL_ADDRESS: server?.address ?? "" };
  const stops: (() => Promise<void>)[] = server ? [() => server.stop()] : [];
  const stopAll = async () => {
    for (const stop of stops.reverse())
      await stop().catch((error: unknown) => options.log(`stop failed: ${String(error)}`));
  };
  try {
    await mkdir(stateDir, { recursive: true });
    const payloadsRoot = await mkdtemp(path.join(stateDir, "bench-payloads-"));
    stops.push(() => rm(payloadsRoot, { recursive: true, force: true }));
    const payloadDirs = { rewind: path.join(payloadsRoot, "rewind"), plain: path.join(payloadsRoot, "plain") };
    const mcpChild = forkChild("mcp-server-main.ts", [], []);
    const mcp = ipcClient(mcpChild.child);
    stops.push(async () => {
      await mcp.call("stop").catch(() => undefined);
      if (mcpChild.child.exitCode === null) mcpChild.child.kill("SIGKILL");
    });
    const mcpReady = await waitForReady(mcpChild.child, mcpChild.output, 30_000, "the MCP server");
    const mcpUrl = String(mcpReady.info["url"]);

    const apiEnv = {
      ...temporalEnv,
      REWIND_STATE_DIR: stateDir,
      REWIND_PORT: "0",
      REWIND_TASK_QUEUE: `bench-${randomUUID()}`,
      REWIND_SECRET_KEY: Buffer.alloc(32, 42).toString("base64"),
      REWIND_LOG_LEVEL: "warn",
      REWIND_PAYLOAD_STORE: `file:${payloadDirs.rewind}`,
      ...(options.acceleratorsOff ? { REWIND_ACCELERATORS_OFF: options.acceleratorsOff } : {}),
    };
    const config = loadConfig(apiEnv, REPO_ROOT);
    const address = config.temporal.address ?? "";
    const api = await startApi(config, address, undefined, silentLogger);
    stops.push(() => api.stop());

    const plainTaskQueue = `bench-plain-${randomUUID()}`;
    const workersOptions: WorkersOptions = {
      address,
      namespace: config.temporal.namespace,
      rewindTaskQueue: config.temporal.taskQueue,
      plainTaskQueue,
      cacheDir: path.join(stateDir, "cache"),
      publicUrl: api.url,
      warmIsolates: config.warmIsolates,
      memoryMb: config.sandbox.memoryMb,
      eagerCalls: config.eagerCalls,
      spareSessionIdleMs: config.spareSessionIdleMs,
      accelerators: config.accelerators,
      cpuMsPerStep: config.sandbox.cpuMsPerStep,
      payloads: config.payloads,
      plainPayloadsDir: payloadDirs.plain,
      // On its command line, which `ps` shows: the cluster's secrets come from the environment it inherits.
      apiEnv: withoutSecrets(apiEnv),
      cluster: server === undefined,
    };
    if (options.profileDir) await mkdir(options.profileDir, { recursive: true });
    const profileArgs = options.profileDir ? ["--cpu-prof", `--cpu-prof-dir=${options.profileDir}`] : [];
    const launchWorkers = async (execArgv: string[]): Promise<WorkersProcess> => {
      const workersChild = forkChild("workers-main.ts", [JSON.stringify(workersOptions)], execArgv);
      const workers = ipcClient(workersChild.child);
      let stopping: Promise<void> | undefined;
      const stop = () => (stopping ??= stopOnce());
      const stopOnce = async () => {
        if (workersChild.child.connected) await workers.call("stop").catch(() => undefined);
        await new Promise<void>((resolve) => {
          if (workersChild.child.exitCode !== null) return resolve();
          const timer = setTimeout(() => {
            workersChild.child.kill("SIGKILL");
            resolve();
          }, 30_000);
          workersChild.child.once("exit", () => {
            clearTimeout(timer);
            resolve();
          });
        });
      };
      stops.push(stop);
      const ready = await waitForReady(workersChild.child, workersChild.output, 180_000, "the workers");
      return { workers, pid: Number(ready.info["pid"]), stop };
    };
    const first = await launchWorkers(profileArgs);
    const workers = first.workers;

    const connection = await connectClient(connectionSettings(config.temporal, address));
    stops.push(() => connection.close());
    const client = new Client({
      connection,
      namespace: config.temporal.namespace,
      dataConverter: rewindDataConverter(createExternalStorage(config.payloads)),
    });
    const plainClient = new Client({
      connection,
      namespace: config.temporal.namespace,
      dataConverter: plainDataConverter(payloadDirs.plain, config.payloads.thresholdBytes),
    });
    // On a cluster others share: the bench's own task queues are left with nothing open.
    if (!server)
      stops.push(async () => {
        await terminateOpenWorkflows(
          client,
          [config.temporal.taskQueue, plainTaskQueue],
          "the bench run that started it is over",
          options.log,
        );
      });
    const directPool = createMcpPool({});
    stops.push(() => directPool.close());

    const registered = await fetch(`${api.url}/v1/toolsets`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ mcpServers: { svc: { url: mcpUrl } } }),
    });
    const body = (await registered.json()) as { id?: string };
    if (registered.status !== 201 && registered.status !== 200)
      throw new Error(`registering the toolset answered ${registered.status}: ${JSON.stringify(body)}`);

    return {
      address,
      config,
      api,
      client,
      plainClient,
      payloadDirs,
      mcpUrl,
      toolsetId: String(body.id),
      plainTaskQueue,
      directPool,
      mcp,
      workers,
      workersPid: first.pid,
      addWorkers: () => launchWorkers([]),
      stop: stopAll,
      pids: {
        bench: process.pid,
        workers: first.pid,
        mcp: mcpChild.child.pid,
        temporal: server
          ? findPid(["start-dev", "--port", server.address.slice(server.address.lastIndexOf(":") + 1)])
          : temporalServicePids(),
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * The processes of a cluster's services on this machine (`temporal-server … start --service …`,
 * as scripts/temporal-cluster.sh starts them), summed as Temporal's CPU; none found: not measured.
 */
function temporalServicePids(): number[] | undefined {
  const pids = findPids(["start", "--service"]);
  return pids.length > 0 ? pids : undefined;
}

/** Temporal settings that are secrets themselves (an API key, a client key's PEM), left out. */
function withoutSecrets(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(([name]) => name !== "TEMPORAL_API_KEY" && name !== "TEMPORAL_TLS_CLIENT_KEY_DATA"),
  );
}
