/**
 * Starts the Rewind worker from the configuration: the process-level wrapper around
 * createRewindWorker that the `dev` and `worker` commands share.
 */
import path from "node:path";
import type { Config } from "../config.ts";
import { resolveSecretKey } from "../credentials/secret-key.ts";
import { createTargetPolicy } from "../http-tool/index.ts";
import type { Logger } from "../shared/logger.ts";
import { createTracing } from "../tracing/tracing.ts";
import { connectionSettings } from "../temporal/connection.ts";
import { createRewindWorker, type RewindWorker } from "../worker/create-worker.ts";
import { installTemporalRuntime } from "../worker/temporal-runtime.ts";

const SDK_LEVEL = { debug: "DEBUG", info: "INFO", warn: "WARN", error: "ERROR" } as const;

export async function startWorker(config: Config, temporalAddress: string, logger: Logger): Promise<RewindWorker> {
  installTemporalRuntime(logger, SDK_LEVEL[config.logLevel]);
  return createRewindWorker({
    ...connectionSettings(config.temporal, temporalAddress),
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    sandbox: config.sandbox,
    warmIsolates: config.warmIsolates,
    cacheDir: path.join(config.stateDir, "cache"),
    secretKey: await resolveSecretKey(config),
    events: config.events,
    publicUrl: config.api.publicUrl,
    deployment: config.temporal.deployment,
    payloads: config.payloads,
    targets: createTargetPolicy(config.outbound),
    tracing: createTracing({ serviceName: config.otel?.serviceName ?? "rewind", ...(config.otel ? { otlp: { url: config.otel.url, headers: config.otel.headers } } : {}) }),
  });
}
