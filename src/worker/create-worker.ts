/**
 * Creates the Rewind worker: the run workflow, the sandbox step, and (as they arrive) the
 * dispatchers, on the `rewind` task queue. Everything it needs comes in as options, so tests
 * and the embedded stack build it the same way.
 */
import { Client } from "@temporalio/client";
import { Worker, type InjectedSinks, type NativeConnection, type WorkerOptions } from "@temporalio/worker";
import type { AdvanceInput, AdvanceResult, FinishedSpan, TracingSinks } from "../shared/index.ts";
import { createTracing, type Tracing } from "../tracing/index.ts";
import {
  createActivities,
  createCallReports,
  createSessionOpener,
  noStepsAhead,
  runSessionsPrefix,
  stepsAheadIn,
} from "../activities/index.ts";
import { createCredentialResolver, createSecretBox } from "../credentials/index.ts";
import { createEndpointResolver, createWebhookTokens } from "../events/index.ts";
import {
  DEFAULT_EAGER_CALLS,
  DEFAULT_MAX_CACHED_WORKFLOWS,
  DEFAULT_SPARE_SESSION_IDLE_MS,
  DEFAULT_WORKFLOW_STACK_FRAMES,
  type Accelerators,
  type SandboxLimits,
  type WorkerDeployment,
  type PayloadsConfig,
} from "../config.ts";
import { createGuardedFetcher, type GuardedFetcherOptions, type TargetPolicy } from "../http-tool/index.ts";
import { createMcpPool } from "../mcp/index.ts";
import { createSandbox, type Sandbox } from "../sandbox/index.ts";
import { validateAgainstSchema } from "../schemas/index.ts";
import { createStoredScriptStore } from "../storage/index.ts";
import type { StorageDriver } from "@temporalio/common";
import { createExternalStorage, createStorageDriver, rewindDataConverter, measuredDriver } from "../payloads/index.ts";
import { connectClient, connectNative, type TemporalConnectionSettings } from "../temporal/index.ts";
import { loadWorkflowBundle } from "./workflow-bundle.ts";
import { NO_METRICS, type RewindMetrics } from "../metrics/index.ts";
import { createObservationReports } from "./observation-sink.ts";
import { runMetricsSinks } from "./run-metrics-sink.ts";

/** Temporal frontend (`address`, e.g. `127.0.0.1:7233`) and how to reach it: API key, TLS, gRPC headers. */
export interface RewindWorkerOptions extends TemporalConnectionSettings {
  namespace: string;
  taskQueue: string;
  sandbox: SandboxLimits;
  /** Warm isolates kept (LRU). */
  warmIsolates: number;
  /** A warm isolate not stepped for this long is given back (default 30 s; 0: never). */
  warmIdleMs?: number;
  /** Where the workflow bundle is cached. */
  cacheDir: string;
  /**
   * How long `shutdown()` lets the activities in flight (tool calls) end before cancelling them
   * (`Config.shutdownGraceMs`). Default 0: at once, as the Temporal SDK does.
   */
  shutdownGraceMs?: number;
  /** Runs kept in Temporal's sticky cache (see `Config.maxCachedWorkflows`). Default 500. */
  maxCachedWorkflows?: number;
  /** Calls a workflow task hands straight back to this worker (see `Config.eagerCalls`). Default 16. */
  eagerCalls?: number;
  /** Spare MCP sessions' idle bound (see `Config.spareSessionIdleMs`). Default 30 s; 0 keeps none. */
  spareSessionIdleMs?: number;
  /** Stack frames the workflow code keeps (see `Config.workflowStackFrames`). Default 0. */
  workflowStackFrames?: number;
  /** Key that opens sealed secrets (webhook secrets, credentials). */
  secretKey: Buffer;
  /** Where the default namespace's events go unless it set an endpoint. */
  events?: { url: string; secret: string } | undefined;
  /** Base URL harnesses reach the API at, for the URLs `webhook(name)` gives scripts. */
  publicUrl: string;
  /** Options of the http tool's fetcher; tests use them to reach loopback servers. Never from config. */
  httpTool?: GuardedFetcherOptions;
  /**
   * The outbound target policy MCP servers and tenants' events endpoints are dialled under
   * (`createTargetPolicy(config.outbound)`). Default: none, every target dialled as it is.
   */
  targets?: TargetPolicy;
  /** Where spans go; default: nowhere. */
  tracing?: Tracing;
  /** Where payloads over the threshold are stored (Temporal's External Storage). */
  payloads: PayloadsConfig;
  /** The payload store's driver, when not the one `payloads` names (tests wrap it to inject faults). */
  storageDriver?: StorageDriver;
  /**
   * Share another worker's sandbox (its warm isolates) instead of creating one; the owner
   * disposes it. With `activitiesOnly`, a process can run a second, activity-only worker
   * beside a full one — how tests put warm isolates and workflow tasks on different workers.
   */
  sharedSandbox?: Sandbox;
  /** Poll activities only (no workflow tasks, so no local activities either). */
  activitiesOnly?: boolean;
  /** How this worker names itself in histories; default: Temporal's `pid@host`. */
  identity?: string;
  /**
   * The Worker Deployment version this worker serves. Set, the worker opts into Worker
   * Versioning: the server sends it only tasks of runs on its version (pinned runs stay on the
   * version that started them); unset, it is an unversioned worker, as before.
   */
  deployment?: WorkerDeployment | undefined;
  /** Where runs, calls, steps, the sandbox and the payload store are measured; default: nowhere. */
  metrics?: RewindMetrics;
  /** The worker's accelerators that can be switched off (`Config.accelerators`); default: all on. */
  accelerators?: Partial<Pick<Accelerators, "speculative-steps" | "session-opener">>;
}

const VERSIONING_BEHAVIOR = { pinned: "PINNED", "auto-upgrade": "AUTO_UPGRADE" } as const;

/** The Worker.create options that make a worker serve a deployment version (none when unset). */
export function workerDeploymentOptions(
  deployment: WorkerDeployment | undefined,
): Pick<WorkerOptions, "workerDeploymentOptions"> {
  if (!deployment) return {};
  return {
    workerDeploymentOptions: {
      useWorkerVersioning: true,
      version: { deploymentName: deployment.name, buildId: deployment.buildId },
      defaultVersioningBehavior: VERSIONING_BEHAVIOR[deployment.defaultBehavior],
    },
  };
}

export interface RewindWorker {
  worker: Worker;
  sandbox: Sandbox;
  /**
   * The connection the worker polls over. A client on it may start runs eagerly (the first
   * workflow task comes back in the start's answer, for this worker); it closes with the worker.
   */
  connection: NativeConnection;
  /**
   * Takes a step as the `advanceScript` local activity would, here: the API beside this worker
   * takes a new run's first step before starting it, and the run's isolate stays warm here.
   */
  advanceScript(input: AdvanceInput): Promise<AdvanceResult>;
  /**
   * Gives back what `advanceScript` left for a run that then could not start: its warm isolate
   * and the MCP sessions its first step opened, or is about to open once their credentials are
   * read (those are never opened).
   */
  forgetFirstStep(namespace: string, runId: string): void;
  /** Runs until shutdown() is called; rejects if the worker fails. */
  run(): Promise<void>;
  shutdown(): Promise<void>;
}

export async function createRewindWorker(options: RewindWorkerOptions): Promise<RewindWorker> {
  const metrics = options.metrics ?? NO_METRICS;
  const temporal: TemporalConnectionSettings = {
    address: options.address,
    apiKey: options.apiKey,
    tls: options.tls,
    grpcMetadata: options.grpcMetadata,
  };
  const connection = await connectNative(temporal);
  const clientConnection = await connectClient(temporal).catch(async (error: unknown) => {
    await connection.close();
    throw error;
  });
  const sandbox =
    options.sharedSandbox ??
    createSandbox({
      memoryMb: options.sandbox.memoryMb,
      cpuMsPerStep: options.sandbox.cpuMsPerStep,
      warmSessions: options.warmIsolates,
      ...(options.warmIdleMs === undefined ? {} : { warmIdleMs: options.warmIdleMs }),
      validate: validateAgainstSchema,
      metrics,
    });
  // A shared sandbox is reported by the worker that owns it.
  const unwatchSandbox = options.sharedSandbox ? () => undefined : metrics.watchSandbox(sandbox);
  const mcpPool = createMcpPool({
    ...(options.targets ? { targets: options.targets } : {}),
    spareIdleMs: options.spareSessionIdleMs ?? DEFAULT_SPARE_SESSION_IDLE_MS,
  });
  const unwatchMcpPool = metrics.watchMcpPool(mcpPool);
  const tracing = options.tracing ?? createTracing({ serviceName: "rewind-worker" });
  const dataConverter = rewindDataConverter(
    createExternalStorage(
      options.payloads,
      measuredDriver(options.storageDriver ?? createStorageDriver(options.payloads), metrics),
    ),
  );
  const client = new Client({ connection: clientConnection, namespace: options.namespace, dataConverter });
  const box = createSecretBox(options.secretKey);
  const endpoints = createEndpointResolver({ client, box, fallback: options.events });
  const on = { "speculative-steps": true, "session-opener": true, ...options.accelerators };
  const credentials = createCredentialResolver({ client, box });
  const sessionOpener = createSessionOpener({ mcpPool, credentials });
  const activities = createActivities({
    sandbox,
    taskQueue: options.taskQueue,
    mcpPool,
    endpoints,
    ...(options.targets ? { targets: options.targets } : {}),
    guardedFetch: createGuardedFetcher(options.httpTool),
    webhookTokens: createWebhookTokens(options.secretKey),
    publicUrl: options.publicUrl,
    client,
    storedScripts: createStoredScriptStore(client, options.taskQueue),
    credentials,
    ...(on["session-opener"] ? { openSessions: sessionOpener.open } : {}),
    stepsAhead: on["speculative-steps"] ? stepsAheadIn(sandbox) : noStepsAhead,
    tracing,
    validate: validateAgainstSchema,
    callReports: createCallReports(client),
    metrics,
  });
  const observationReports = createObservationReports(client);
  const worker = await Worker.create({
    connection,
    dataConverter,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(options.activitiesOnly
      ? {}
      : {
          workflowBundle: await loadWorkflowBundle(options.cacheDir, {
            versioned: options.deployment !== undefined,
            stackFrames: options.workflowStackFrames ?? DEFAULT_WORKFLOW_STACK_FRAMES,
          }),
        }),
    activities,
    maxCachedWorkflows: options.maxCachedWorkflows ?? DEFAULT_MAX_CACHED_WORKFLOWS,
    shutdownGraceTime: options.shutdownGraceMs ?? 0,
    maxEagerActivityReservationsPerWorkflowTask: options.eagerCalls ?? DEFAULT_EAGER_CALLS,
    ...(options.identity ? { identity: options.identity } : {}),
    ...workerDeploymentOptions(options.deployment),
    sinks: {
      ...({
        tracing: { span: { fn: (_info, span: FinishedSpan) => tracing.record(span) } },
      } satisfies InjectedSinks<TracingSinks>),
      ...runMetricsSinks(metrics),
      ...observationReports.sinks,
    },
  });
  let running: Promise<void> | undefined;
  const shutdown = () => {
    if (worker.getState() === "RUNNING") worker.shutdown();
  };
  return {
    worker,
    sandbox,
    connection,
    advanceScript: activities.advanceScript,
    forgetFirstStep(namespace, runId) {
      sandbox.forget(runId);
      sessionOpener.forget(namespace, runId);
      mcpPool.retireWhereKeyStarts(runSessionsPrefix(namespace, runId));
    },
    run() {
      running ??= worker.run().finally(async () => {
        unwatchSandbox();
        unwatchMcpPool();
        if (!options.sharedSandbox) sandbox.dispose();
        await observationReports.flush();
        await mcpPool.close();
        await tracing.shutdown();
        await clientConnection.close();
        await connection.close();
      });
      return running;
    },
    async shutdown() {
      shutdown();
      await running;
    },
  };
}
