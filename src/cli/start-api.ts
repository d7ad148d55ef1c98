/**
 * Starts the HTTP API on its own: a Temporal client, the type-checker, the toolset registry and
 * the express app, listening on the configured address; when it waits for its cluster, the
 * listener comes first and answers 503 until the app is there. Returns a handle to stop it.
 */
import { Client, type Connection } from "@temporalio/client";
import type { Express } from "express";
import type { RewindWorker } from "../worker/index.ts";
import {
  createApp,
  createFrontDoor,
  createRunService,
  createOpenRunCounter,
  createWaitingApp,
  type FrontDoor,
} from "../api/index.ts";
import { createExternalStorage, createStorageDriver, rewindDataConverter, measuredDriver } from "../payloads/index.ts";
import type { PrometheusMetrics } from "../metrics/index.ts";
import { processMetrics } from "./process-metrics.ts";
import type { Config } from "../config.ts";
import { createSecretBox, resolveSecretKey } from "../credentials/index.ts";
import { createWebhookTokens } from "../events/index.ts";
import { createTypeCheckPool, type TypeCheckPool } from "../declarations/index.ts";
import type { Logger } from "../shared/index.ts";
import { createTargetPolicy, type TargetPolicy } from "../http-tool/index.ts";
import { listAllTools } from "../mcp/index.ts";
import { createToolsetRegistry } from "../toolsets/index.ts";
import { createTemporalToolsetStore, createStoredScriptStore } from "../storage/index.ts";
import { toolsetWorkflowId } from "../shared/index.ts";
import { getObservedQuery } from "../workflows/messages.ts";
import {
  connectClient,
  connectionSettings,
  requireNamespaceReady,
  temporalAnswers,
  waitForCluster,
  type ClusterWaitOptions,
} from "../temporal/index.ts";
import { listenApi, type ApiListener } from "./api-listener.ts";

/** How long registration waits for one MCP server to list all its tools. */
const REGISTRATION_TIMEOUT_MS = 10_000;
/** Observed result types come from a worker's answer; without one in time, declarations go without. */
const OBSERVED_QUERY_MS = 2_000;

function queryWithin<T>(query: Promise<T>, ms: number, fallback: T): Promise<T> {
  const timeout = new Promise<T>((resolve) => setTimeout(() => resolve(fallback), ms).unref());
  return Promise.race([query.catch(() => fallback), timeout]);
}

/** `[origin]` of a URL, `[]` for none or one that does not parse. */
function originOf(url: string | undefined): string[] {
  if (!url) return [];
  try {
    return [new URL(url).origin];
  } catch {
    return [];
  }
}

export interface RunningApi {
  url: string;
  stop(): Promise<void>;
}

export interface StartApiOptions {
  /** The outbound target policy registration and events endpoints go through; default: from `config.outbound`. Tests inject a resolver. */
  targets?: TargetPolicy;
  /** Where the API measures (payload store, open runs) and what `GET /metrics` serves; default: the process's. */
  metrics?: PrometheusMetrics;
  /**
   * A Rewind worker in this process, polling the API's task queue (the embedded stack). The API
   * shares its connection instead of opening its own (it stays the worker's to close) and starts
   * runs eagerly, so a run's first workflow task comes back to that worker in the start's answer
   * instead of waiting for a poll (unless the worker is versioned: then the run must go where
   * the deployment's current version is); and it takes each new run's first step in that
   * worker's sandbox, carried in the run's input.
   */
  worker?: Pick<RewindWorker, "connection" | "advanceScript" | "forgetFirstStep">;
  /**
   * The type-check threads to use instead of starting the API's own (`config.api.typeCheck`):
   * several APIs in one process (a test suite's) can share one compiler. It stays its owner's
   * to close.
   */
  typeChecker?: TypeCheckPool;
  /**
   * While nothing answers at the address, wait for the cluster (`rewind api`: cluster-wait.ts),
   * serving the waiting app meanwhile; unset: fail at once. Not with `worker`, whose connection is open.
   */
  clusterWait?: ClusterWaitOptions | undefined;
}

/** The API's Temporal connection, its namespace checked; waits for the cluster when told to. */
async function reachTemporal(
  config: Config,
  temporalAddress: string,
  logger: Logger,
  options: StartApiOptions,
): Promise<{ connection: Connection | RewindWorker["connection"]; close(): Promise<void> }> {
  const shared = options.worker?.connection;
  if (shared) {
    const warning = await requireNamespaceReady(shared, config.temporal.namespace, temporalAddress);
    if (warning) logger.warn(warning);
    return { connection: shared, close: async () => undefined };
  }
  const settings = connectionSettings(config.temporal, temporalAddress);
  const reach = async () => {
    const connection = await connectClient(settings);
    try {
      const warning = await requireNamespaceReady(connection, config.temporal.namespace, temporalAddress);
      if (warning) logger.warn(warning);
    } catch (error) {
      await connection.close();
      throw error;
    }
    return { connection, close: () => connection.close() };
  };
  return options.clusterWait ? waitForCluster(settings, reach, options.clusterWait) : reach();
}

export async function startApi(
  config: Config,
  temporalAddress: string,
  uiUrl: string | undefined,
  logger: Logger,
  options: StartApiOptions = {},
): Promise<RunningApi> {
  const secretKey = await resolveSecretKey(config);
  // Waiting for the cluster, it listens first: probes get the waiting app's answers meanwhile.
  // Otherwise it listens once it serves, so that an answer from its port means the API is there.
  const wait = options.clusterWait;
  const early = wait ? await listenApi(config.api, createWaitingApp(logger)) : undefined;
  let told = false;
  const clusterWait = wait && {
    ...wait,
    log(line: string) {
      if (!told && early) wait.log(`the API listens at ${early.url}; GET /readyz answers 503 until Temporal answers`);
      told = true;
      wait.log(line);
    },
  };
  let serving: ServingApi;
  try {
    serving = await createApi(config, temporalAddress, uiUrl, logger, secretKey, { ...options, clusterWait });
  } catch (error) {
    await early?.close();
    throw error;
  }
  let listener: ApiListener;
  try {
    listener = early ?? (await listenApi(config.api, serving.app));
  } catch (error) {
    await serving.close();
    throw error;
  }
  listener.serve(serving.app);
  return {
    url: listener.url,
    async stop() {
      await serving.frontDoor.close();
      await listener.close();
      await serving.close();
    },
  };
}

interface ServingApi {
  app: Express;
  /** Closed before the listener: its sessions' open streams would hold the listener's close. */
  frontDoor: FrontDoor;
  close(): Promise<void>;
}

async function createApi(
  config: Config,
  temporalAddress: string,
  uiUrl: string | undefined,
  logger: Logger,
  secretKey: Buffer,
  options: StartApiOptions,
): Promise<ServingApi> {
  const shared = options.worker?.connection;
  const { connection, close: closeConnection } = await reachTemporal(config, temporalAddress, logger, options);
  const metrics = options.metrics ?? (await processMetrics(config, logger));
  const storage = createExternalStorage(config.payloads, measuredDriver(createStorageDriver(config.payloads), metrics));
  const client = new Client({
    connection,
    namespace: config.temporal.namespace,
    dataConverter: rewindDataConverter(storage),
  });
  const storedScripts = createStoredScriptStore(client, config.temporal.taskQueue);
  const box = createSecretBox(secretKey);
  const targets = options.targets ?? createTargetPolicy(config.outbound);
  const toolsets = createToolsetRegistry({
    store: createTemporalToolsetStore(client, config.temporal.taskQueue),
    listTools: (url, headers) => listAllTools({ url, headers, timeoutMs: REGISTRATION_TIMEOUT_MS, targets }),
    loadStoredScript: (namespace, id) => storedScripts.load(namespace, id),
    loadObserved: (namespace, id) =>
      queryWithin(
        client.workflow.getHandle(toolsetWorkflowId(namespace, id)).query(getObservedQuery),
        OBSERVED_QUERY_MS,
        {},
      ),
  });
  const typeChecker = options.typeChecker ?? createTypeCheckPool(config.api.typeCheck);
  const closeTypeChecker = options.typeChecker ? async () => undefined : () => typeChecker.close();
  const runs = createRunService({
    client,
    taskQueue: config.temporal.taskQueue,
    uiUrl,
    continueAsNewAfterEvents: config.continueAsNewAfterEvents,
    // Not under worker versioning: the worker beside the API need not be the deployment's current version.
    eagerStart: shared !== undefined && config.temporal.deployment === undefined && config.accelerators["eager-start"],
    metrics,
    ...(options.worker && config.accelerators["api-first-step"]
      ? { advanceScript: options.worker.advanceScript, forgetFirstStep: options.worker.forgetFirstStep }
      : {}),
  });
  const frontDoor = createFrontDoor({ runs, toolsets, typeChecker, waitMs: config.api.mcpWaitMs, logger });
  const app = createApp({
    runs,
    frontDoor,
    toolsets,
    storedScripts,
    typeChecker,
    events: { client, taskQueue: config.temporal.taskQueue, box, targets },
    hooks: { client, webhookTokens: createWebhookTokens(secretKey) },
    credentials: { client, taskQueue: config.temporal.taskQueue, box, toolsets },
    // The Web UI's origin may call the codec routes: the one configured, or that of the UI runs link to.
    codec: {
      storage,
      temporalNamespace: config.temporal.namespace,
      corsOrigins: config.api.codecCorsOrigins ?? originOf(uiUrl),
    },
    box,
    apiKeys: config.api.keys,
    metrics,
    logger,
    temporal: { address: temporalAddress, answers: () => temporalAnswers(connection) },
  });
  const unwatchRuns = metrics.watchOpenRuns(createOpenRunCounter(client, config.temporal.taskQueue));
  if (config.api.keys.size === 0)
    logger.warn("REWIND_API_KEYS is not set: serving loopback callers without a key, as namespace default");
  return {
    app,
    frontDoor,
    async close() {
      unwatchRuns();
      await closeTypeChecker();
      await closeConnection();
    },
  };
}
