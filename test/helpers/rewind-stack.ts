/**
 * Starts what an integration test talks to: a Rewind worker on its own task queue and the API
 * on a free loopback port, both against the test run's Temporal dev server. Each test file gets
 * its own task queue, so files running in parallel never pick up each other's runs.
 */
import { randomUUID } from "node:crypto";
import path from "node:path";
import { Client } from "@temporalio/client";
import { connectClient } from "../../src/temporal/index.ts";
import { inject } from "vitest";
import { loadConfig, parseAccelerators, type AcceleratorName, type Config } from "../../src/config.ts";
import { createConsoleLogger } from "../../src/cli/console-logger.ts";
import { startApi, type RunningApi } from "../../src/cli/start-api.ts";
import { createTypeCheckPool, type TypeCheckPool, type TypeCheckPoolOptions } from "../../src/declarations/index.ts";
import { silentLogger, type Logger } from "../../src/shared/logger.ts";
import { createRewindWorker, type RewindWorker } from "../../src/worker/create-worker.ts";
import {
  installTemporalRuntime,
  installTemporalRuntimeWithMetrics,
  temporalSdkMetricsUrl,
} from "../../src/temporal/temporal-runtime.ts";
import { createPrometheusMetrics, type PrometheusMetrics } from "../../src/metrics/index.ts";
import { createTargetPolicy, type GuardedFetcherOptions, type Resolver } from "../../src/http-tool/index.ts";
import { createTracing } from "../../src/tracing/tracing.ts";
import { createExternalStorage, rewindDataConverter } from "../../src/payloads/external-storage.ts";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import { REPO_ROOT } from "./paths.ts";
import { TEST_SECRET_KEY } from "./secret-key.ts";
import { getFreePort } from "./free-port.ts";
import { waitFor } from "./wait-for.ts";

export { REPO_ROOT };

/** The fields API responses have; tests read them without casts. */
export interface ApiBody {
  id?: string;
  status?: string;
  result?: unknown;
  error?: { code?: string; type?: string; message: string; details?: unknown };
  runs?: { id: string; status: string }[];
  nextPageToken?: string;
  [key: string]: unknown;
}

export interface StackOptions {
  /** Environment overrides, as a user would set them (REWIND_SANDBOX_CPU_MS, …). */
  env?: Record<string, string>;
  /** Start no in-process worker (the test runs its own, e.g. in a child process). */
  noWorker?: boolean;
  /** Options of the worker's http tool (loopback for tests, an injected resolver). */
  httpTool?: GuardedFetcherOptions;
  /** Where the worker's spans go (e.g. an InMemorySpanExporter). */
  spanExporter?: SpanExporter;
  /** How the outbound target policy of the API and the worker resolves names (made-up names of tests). */
  outbound?: { resolve?: Resolver };
  /**
   * The API's log; default: silent. The worker logs only through the Temporal SDK's runtime
   * logger: capture that with installTemporalRuntime before the stack starts.
   */
  logger?: Logger;
  /**
   * Install the Temporal SDK's runtime with its metrics exporter, so the stack's metrics carry
   * the SDK's too. The runtime is process-wide: only the first stack of a test file decides.
   */
  sdkMetrics?: boolean;
  /**
   * As `npm start` runs it: the worker starts first and the API shares its connection, starting
   * runs eagerly with their first step taken in the worker's sandbox (on a port picked
   * beforehand, since the worker needs the API's URL).
   */
  eagerStart?: boolean;
}

export interface RewindStack {
  config: Config;
  address: string;
  api: RunningApi;
  client: Client;
  worker: RewindWorker | undefined;
  /** The stack's own metrics (API and in-process worker), served by the API's `GET /metrics`. */
  metrics: PrometheusMetrics;
  /** Calls the API with JSON in and out. */
  request(
    method: string,
    route: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: ApiBody }>;
  stop(): Promise<void>;
}

export { TEST_SECRET_KEY };

/**
 * With API keys set, the outbound target policy is on, and tests' MCP servers and event receivers
 * listen on loopback: a stack with keys trusts loopback unless the test sets REWIND_TRUSTED_TARGETS
 * itself (the policy's own tests do, to see loopback refused).
 */
const LOOPBACK_TARGETS = "127.0.0.0/8,::1,localhost";

/**
 * Whether the suite runs with all these accelerators on: a test of an accelerator itself is
 * skipped (and reported skipped) in a run that switched it off.
 */
export function acceleratorsOn(...names: AcceleratorName[]): boolean {
  const on = parseAccelerators(process.env["REWIND_ACCELERATORS_OFF"]);
  return names.every((name) => on[name]);
}

/** The suite's own REWIND_ACCELERATORS_OFF, for every stack and worker process a test starts. */
export function acceleratorsOffForTests(): Record<string, string> {
  const off = process.env["REWIND_ACCELERATORS_OFF"];
  return off ? { REWIND_ACCELERATORS_OFF: off } : {};
}

export function testConfig(env: Record<string, string> = {}): Config {
  const trustLoopback = env["REWIND_API_KEYS"] !== undefined && env["REWIND_TRUSTED_TARGETS"] === undefined;
  return loadConfig(
    {
      REWIND_STATE_DIR: path.join(REPO_ROOT, ".rewind"),
      REWIND_PORT: "0",
      REWIND_TASK_QUEUE: `test-${randomUUID()}`,
      TEMPORAL_ADDRESS: inject("temporalAddress"),
      REWIND_SECRET_KEY: TEST_SECRET_KEY.toString("base64"),
      ...(trustLoopback ? { REWIND_TRUSTED_TARGETS: LOOPBACK_TARGETS } : {}),
      // `REWIND_ACCELERATORS_OFF=all npm test` runs the suite on the durable core alone.
      ...acceleratorsOffForTests(),
      ...env,
    },
    REPO_ROOT,
  );
}

/**
 * One type-check pool per process and settings, shared by the stacks of every test file the
 * process runs: each pool's threads load TypeScript and check a first script (some 3 CPU-s a
 * thread), which most files would otherwise pay again. Its threads are unref'd: they do not keep
 * the process alive.
 */
const typeCheckers = new Map<string, TypeCheckPool>();
function sharedTypeChecker(options: TypeCheckPoolOptions): TypeCheckPool {
  const key = JSON.stringify(options);
  let pool = typeCheckers.get(key);
  if (!pool) typeCheckers.set(key, (pool = createTypeCheckPool(options)));
  return pool;
}

export async function startRewindStack(options: StackOptions = {}): Promise<RewindStack> {
  // Tests fail runs on purpose; the SDK's warnings about them would drown the report.
  if (options.sdkMetrics)
    await installTemporalRuntimeWithMetrics(createConsoleLogger("error", "temporal-sdk"), "ERROR");
  installTemporalRuntime(createConsoleLogger("error", "temporal-sdk"), "ERROR");
  const metrics = createPrometheusMetrics({ sdkMetricsUrl: temporalSdkMetricsUrl });
  const eager = options.eagerStart === true && !options.noWorker;
  const config = testConfig({
    ...(eager ? { REWIND_HOST: "127.0.0.1", REWIND_PORT: String(await getFreePort()) } : {}),
    ...options.env,
  });
  const address = config.temporal.address ?? "";
  const targets = createTargetPolicy({
    ...config.outbound,
    ...(options.outbound?.resolve ? { resolve: options.outbound.resolve } : {}),
  });
  const startTheApi = (worker?: RewindWorker) =>
    startApi(config, address, undefined, options.logger ?? silentLogger, {
      targets,
      metrics,
      typeChecker: sharedTypeChecker(config.api.typeCheck),
      ...(worker ? { worker } : {}),
    });
  const apiFirst = eager ? undefined : await startTheApi();
  const worker = options.noWorker
    ? undefined
    : await createRewindWorker({
        address,
        namespace: config.temporal.namespace,
        taskQueue: config.temporal.taskQueue,
        sandbox: config.sandbox,
        warmIsolates: config.warmIsolates,
        workflowStackFrames: config.workflowStackFrames,
        eagerCalls: config.eagerCalls,
        spareSessionIdleMs: config.spareSessionIdleMs,
        accelerators: config.accelerators,
        cacheDir: path.join(config.stateDir, "cache"),
        secretKey: TEST_SECRET_KEY,
        events: config.events,
        publicUrl: apiFirst?.url ?? config.api.publicUrl,
        payloads: config.payloads,
        targets,
        metrics,
        ...(options.httpTool ? { httpTool: options.httpTool } : {}),
        ...(options.spanExporter
          ? { tracing: createTracing({ exporter: options.spanExporter, serviceName: "rewind-test" }) }
          : {}),
      });
  const running = worker?.run();
  const api = apiFirst ?? (await startTheApi(worker));
  const connection = await connectClient({ address });
  const client = new Client({
    connection,
    namespace: config.temporal.namespace,
    dataConverter: rewindDataConverter(createExternalStorage(config.payloads)),
  });
  const stack: RewindStack = {
    config,
    address,
    api,
    client,
    worker,
    metrics,
    async request(method, route, body, headers = {}) {
      // The stack's API as it is now: a test may replace it with a new process.
      const response = await fetch(stack.api.url + route, {
        method,
        headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: (text ? JSON.parse(text) : {}) as ApiBody };
    },
    async stop() {
      await stack.api.stop();
      await worker?.shutdown();
      await running;
      await connection.close();
    },
  };
  return stack;
}

/** Polls GET /v1/runs/{id} until the run is neither running nor parked, or fails after `timeoutMs`. */
export async function waitForRun(
  stack: RewindStack,
  id: string,
  timeoutMs = 30_000,
  headers: Record<string, string> = {},
): Promise<ApiBody> {
  return waitFor(
    `run ${id} to end`,
    async () => {
      const { status, body } = await stack.request("GET", `/v1/runs/${id}`, undefined, headers);
      if (status !== 200) throw new Error(`GET /v1/runs/${id} answered ${status}: ${JSON.stringify(body)}`);
      return body;
    },
    { timeoutMs, until: (body) => body.status !== "running" && body.status !== "parked" },
  );
}
