/**
 * Starts the Rewind worker from the configuration: the process-level wrapper around
 * createRewindWorker that the `dev` and `worker` commands share.
 */
import path from "node:path";
import { ConfigError, type Config } from "../config.ts";
import { resolveSecretKey } from "../credentials/index.ts";
import { createTargetPolicy } from "../http-tool/index.ts";
import type { Logger } from "../shared/index.ts";
import { createTracing } from "../tracing/index.ts";
import {
  connectionSettings,
  connectNative,
  type TemporalConnectionSettings,
  requireNamespaceReady,
  installTemporalRuntimeWithMetrics,
  waitForCluster,
  type ClusterWaitOptions,
} from "../temporal/index.ts";
import { createRewindWorker, type RewindWorker } from "../worker/index.ts";
import { processMetrics } from "./process-metrics.ts";

const SDK_LEVEL = { debug: "DEBUG", info: "INFO", warn: "WARN", error: "ERROR" } as const;

/**
 * Refuses to start against a namespace that is missing or lacks Rewind's search attributes. Over
 * the worker's own kind of connection, whose failures name their cause (a refused certificate…).
 */
async function checkNamespace(settings: TemporalConnectionSettings, namespace: string, logger: Logger): Promise<void> {
  const connection = await connectNative(settings);
  try {
    const warning = await requireNamespaceReady(connection, namespace, settings.address);
    if (warning) logger.warn(warning);
  } finally {
    await connection.close();
  }
}

export interface StartWorkerOptions {
  /**
   * While nothing answers at the address, wait for the cluster (`rewind worker`: cluster-wait.ts);
   * unset: fail at once (`rewind dev`, whose server is up before the worker starts).
   */
  clusterWait?: ClusterWaitOptions;
}

export async function startWorker(
  config: Config,
  temporalAddress: string,
  logger: Logger,
  options: StartWorkerOptions = {},
): Promise<RewindWorker> {
  // Only a worker serves a version: the API takes the same env file without a build id.
  if (config.temporal.deploymentIncomplete) throw new ConfigError(config.temporal.deploymentIncomplete);
  // The SDK's runtime metrics are appended to Rewind's wherever this process serves them.
  await installTemporalRuntimeWithMetrics(logger, SDK_LEVEL[config.logLevel]);
  const metrics = await processMetrics(config, logger);
  const secretKey = await resolveSecretKey(config);
  const settings = connectionSettings(config.temporal, temporalAddress);
  const check = () => checkNamespace(settings, config.temporal.namespace, logger);
  await (options.clusterWait ? waitForCluster(settings, check, options.clusterWait) : check());
  return createRewindWorker({
    ...settings,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    sandbox: config.sandbox,
    warmIsolates: config.warmIsolates,
    warmIdleMs: config.warmIdleMs,
    shutdownGraceMs: config.shutdownGraceMs,
    maxCachedWorkflows: config.maxCachedWorkflows,
    eagerCalls: config.eagerCalls,
    spareSessionIdleMs: config.spareSessionIdleMs,
    workflowStackFrames: config.workflowStackFrames,
    accelerators: config.accelerators,
    cacheDir: path.join(config.stateDir, "cache"),
    secretKey,
    events: config.events,
    publicUrl: config.api.publicUrl,
    deployment: config.temporal.deployment,
    payloads: config.payloads,
    targets: createTargetPolicy(config.outbound),
    metrics,
    tracing: createTracing({
      serviceName: config.otel?.serviceName ?? "rewind",
      ...(config.otel
        ? { otlp: { url: config.otel.url, headers: config.otel.headers, protocol: config.otel.protocol } }
        : {}),
    }),
  });
}
