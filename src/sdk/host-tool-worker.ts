/**
 * The harness side of host tools: a Temporal worker on the harness's own task queue, whose
 * activities are the harness's functions, one per qualified tool name. The harness needs no
 * Temporal knowledge beyond where the cluster is (an address, or Temporal's standard settings read
 * by `temporalSettings(process.env)`, or a NativeConnection it already has): it hands plain async
 * functions over and gets `ctx` with the call's idempotency key, heartbeat, cancellation signal
 * and attempt number.
 */
import type { PayloadsConfig } from "../config.ts";
import { createExternalStorage, rewindDataConverter } from "../payloads/index.ts";
import { Context } from "@temporalio/activity";
import { ApplicationFailure } from "@temporalio/common";
import { Worker, type NativeConnection } from "@temporalio/worker";
import { HOST_RESULT_ENVELOPE_KEY, type HostCallInput, type HostResultEnvelope, type Logger } from "../shared/index.ts";
import { connectNative, type TemporalTls, installTemporalRuntime } from "../temporal/index.ts";
import { HOST_TOOL_ERROR_TYPE, ToolError } from "./tool-error.ts";

export interface HostToolContext {
  /** `<run_id>/<seq>`: the same on every attempt of this call. */
  idempotencyKey: string;
  /** 1 on the first attempt, then 2, 3… */
  attempt: number;
  /** W3C trace context of the call, when the run has one. */
  traceparent: string | undefined;
  /** Fires when the call is cancelled (the run was cancelled, or the attempt timed out). */
  signal: AbortSignal;
  /** Reports progress; the worker also heartbeats on its own while the tool runs. */
  heartbeat(details?: unknown): void;
}

export type HostTool = (args: Record<string, unknown>, ctx: HostToolContext) => Promise<unknown>;

export interface HostToolWorkerOptions {
  /**
   * A connection the harness already has (its own Temporal worker's, say): used as it is, and left
   * open at shutdown. When given, `address`, `apiKey`, `tls` and `grpcMetadata` are not used.
   */
  connection?: NativeConnection | undefined;
  /** Temporal frontend. Default `127.0.0.1:7233`. */
  address?: string | undefined;
  /** Temporal namespace: the one the Rewind worker and API use. Default `default`. */
  namespace?: string | undefined;
  /** Temporal Cloud API key (sent as a bearer token; turns TLS on). Default: none. */
  apiKey?: string | undefined;
  /** `true`: TLS with the system's roots; an object: server CA, client certificate (mTLS), server name. Default: plaintext, or TLS with an API key. */
  tls?: TemporalTls | boolean | undefined;
  /** Extra gRPC headers sent with every request. Default: none. */
  grpcMetadata?: Record<string, string> | undefined;
  /** The task queue the toolset names for these tools' group. */
  taskQueue: string;
  /** Tools by qualified name, e.g. `harness.ask_user`. */
  tools: Record<string, HostTool>;
  /** Calls run at once on this worker. Default 100. */
  maxConcurrentCalls?: number;
  /**
   * The Rewind deployment's payload store (`{ store: { kind: "file", dir } }` or
   * `{ store: { kind: "s3", bucket, prefix } }`, and `thresholdBytes`, default 256 KiB): results
   * over the threshold are kept there and history holds a reference. Without it, a result over
   * Temporal's 2 MiB payload limit fails its call.
   */
  payloads?: Omit<PayloadsConfig, "thresholdBytes"> & { thresholdBytes?: number };
  /** Receives the worker's warnings and errors. Default: stderr. Ignored if the process already set up Temporal's runtime. */
  logger?: Logger;
}

export interface HostToolWorker {
  /** Serves calls until shutdown(); rejects if the worker fails. */
  run(): Promise<void>;
  shutdown(): Promise<void>;
}

const stderrLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (message, fields) => process.stderr.write(`rewind host worker: ${message} ${JSON.stringify(fields ?? {})}\n`),
  error: (message, fields) => process.stderr.write(`rewind host worker: ${message} ${JSON.stringify(fields ?? {})}\n`),
};

function wrap(name: string, tool: HostTool) {
  return async function hostToolActivity(input: HostCallInput): Promise<unknown> {
    const context = Context.current();
    const { info } = context;
    // Heartbeats tell Temporal this worker is alive (and deliver cancellation): a worker that
    // dies or freezes stops them, and the call is retried elsewhere after heartbeatTimeout.
    const every = Math.max(200, Math.floor((info.heartbeatTimeoutMs ?? 60_000) / 3));
    const timer = setInterval(() => context.heartbeat(), every);
    try {
      const value =
        (await tool(input.args, {
          idempotencyKey: `${info.workflowExecution?.workflowId ?? ""}/${info.activityId}`,
          attempt: info.attempt,
          traceparent: input.traceparent,
          signal: context.cancellationSignal,
          heartbeat: (details) => context.heartbeat(details),
        })) ?? null;
      // Only a run that asked for it gets the envelope; an older Rewind would take it for the value.
      if (input.resultEnvelope !== true) return value;
      const envelope: HostResultEnvelope = { [HOST_RESULT_ENVELOPE_KEY]: { attempt: info.attempt }, value };
      return envelope;
    } catch (error) {
      if (error instanceof ToolError) {
        // `attempt` beside the code: the run's journal counts the attempts the call took.
        throw ApplicationFailure.create({
          type: HOST_TOOL_ERROR_TYPE,
          message: error.message,
          nonRetryable: true,
          details: [{ code: error.code, details: error.details ?? null, attempt: info.attempt }],
        });
      }
      throw error;
    } finally {
      clearInterval(timer);
    }
  };
}

/**
 * Starts serving host tools.
 *
 * @example
 * const worker = await createHostToolWorker({
 *   ...temporalSettings(process.env), // TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*…
 *   taskQueue: "my-harness",
 *   tools: { "harness.ask_user": async ({ question }, ctx) => ({ yes: await ask(String(question)) }) },
 * });
 * await worker.run();
 */
export async function createHostToolWorker(options: HostToolWorkerOptions): Promise<HostToolWorker> {
  const names = Object.keys(options.tools);
  const bad = names.find((name) => !/^[A-Za-z_$][\w$]*\..+$/.test(name));
  if (bad) throw new TypeError(`host tool "${bad}" must be named group.tool, as in the toolset`);
  installTemporalRuntime(options.logger ?? stderrLogger, "ERROR");
  const connection =
    options.connection ??
    (await connectNative({
      address: options.address ?? "127.0.0.1:7233",
      apiKey: options.apiKey,
      tls: options.tls,
      grpcMetadata: options.grpcMetadata,
    }));
  const ownConnection = options.connection === undefined;
  const activities = Object.fromEntries(names.map((name) => [name, wrap(name, options.tools[name] as HostTool)]));
  const worker = await Worker.create({
    connection,
    ...(options.payloads
      ? {
          dataConverter: rewindDataConverter(
            createExternalStorage({ thresholdBytes: 256 * 1024, ...options.payloads }),
          ),
        }
      : {}),
    namespace: options.namespace ?? "default",
    taskQueue: options.taskQueue,
    activities,
    maxConcurrentActivityTaskExecutions: options.maxConcurrentCalls ?? 100,
  });
  let running: Promise<void> | undefined;
  return {
    run() {
      running ??= worker.run().finally(() => (ownConnection ? connection.close() : undefined));
      return running;
    },
    async shutdown() {
      if (worker.getState() === "RUNNING") worker.shutdown();
      await running;
    },
  };
}
