/**
 * The one file that uses prom-client: Rewind's metrics in a registry of their own, rendered in
 * Prometheus' text format, with the Temporal SDK's runtime metrics appended on each scrape. The
 * SDK's core exports its metrics itself, on a loopback port (src/temporal/temporal-runtime.ts);
 * fetching that text here gives one endpoint per process instead of two. Gauges (warm isolates,
 * heap, open runs) are read when scraped, never kept up to date in between.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type {
  CallKind,
  McpPoolGauges,
  OpenRunCounts,
  RewindMetrics,
  RunOutcome,
  SandboxGauges,
  StepStart,
} from "./metrics.ts";

export interface PrometheusMetricsOptions {
  /** Also report the process's own metrics (prom-client's `process_*`, `nodejs_*`). Default false: one process, one set. */
  processMetrics?: boolean;
  /** Where the Temporal SDK's runtime serves its metrics, read on each scrape; unset or undefined: none appended. */
  sdkMetricsUrl?: () => string | undefined;
  /** Distinct `group` label values kept; further groups are counted as `other`. Default 64. */
  maxGroups?: number;
  /** How long a scrape waits for the SDK's metrics and for open-run counts. Default 2000 ms. */
  scrapeTimeoutMs?: number;
}

export interface PrometheusMetrics extends RewindMetrics {
  /** `text/plain; version=0.0.4; charset=utf-8`. */
  readonly contentType: string;
  /** One scrape: Rewind's metrics, then the Temporal SDK's. */
  scrape(): Promise<string>;
}

/** Seconds, from a millisecond or two to the two minutes an MCP call may take. */
const CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Seconds: a warm step is a millisecond or so; a cold one replays the whole journal. */
const STEP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The SDK's exposition text, or undefined when its exporter did not answer. */
async function sdkText(url: string, timeoutMs: number): Promise<string | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text();
    return response.ok ? text : undefined;
  } catch {
    return undefined;
  }
}

export function createPrometheusMetrics(options: PrometheusMetricsOptions = {}): PrometheusMetrics {
  const registry = new Registry();
  const registers = [registry];
  const timeoutMs = options.scrapeTimeoutMs ?? 2_000;
  if (options.processMetrics) collectDefaultMetrics({ register: registry });

  const runsStarted = new Counter({
    name: "rewind_runs_started_total",
    help: "Runs whose first execution started on this worker (continue-as-new not counted).",
    registers,
  });
  const apiStarts = new Counter({
    name: "rewind_api_run_starts_total",
    help: "Runs the API started, by how: eager (the first workflow task came back in the start's answer, to the worker in this process) or queued.",
    labelNames: ["start"] as const,
    registers,
  });
  const runsEnded = new Counter({
    name: "rewind_runs_ended_total",
    help: "Runs that ended on this worker, by outcome; failure is the failure type of a failed run.",
    labelNames: ["outcome", "failure"] as const,
    registers,
  });
  const runsContinued = new Counter({
    name: "rewind_runs_continued_total",
    help: "Runs that continued as new on this worker.",
    registers,
  });
  const callsParked = new Counter({
    name: "rewind_calls_parked_total",
    help: "Calls parked waiting for the harness, by reason.",
    labelNames: ["reason"] as const,
    registers,
  });
  const attempts = new Counter({
    name: "rewind_call_attempts_total",
    help: "Attempts of tool calls this worker sent, by kind, tool group and outcome.",
    labelNames: ["kind", "group", "outcome"] as const,
    registers,
  });
  const attemptSeconds = new Histogram({
    name: "rewind_call_attempt_duration_seconds",
    help: "Duration of one attempt of a tool call, by kind and tool group.",
    labelNames: ["kind", "group"] as const,
    buckets: CALL_BUCKETS,
    registers,
  });
  const stepSeconds = new Histogram({
    name: "rewind_step_duration_seconds",
    help: "Duration of one step of a script in the sandbox; cold steps replay the script from its journal.",
    labelNames: ["start"] as const,
    buckets: STEP_BUCKETS,
    registers,
  });
  const payloadBytes = new Counter({
    name: "rewind_payload_store_bytes_total",
    help: "Bytes of payloads written to or read from the payload store.",
    labelNames: ["operation"] as const,
    registers,
  });
  const payloadCount = new Counter({
    name: "rewind_payload_store_payloads_total",
    help: "Payloads written to or read from the payload store.",
    labelNames: ["operation"] as const,
    registers,
  });

  /** A gauge that reads, on each scrape, the sum of `read` over what is watched now. */
  function summedGauge<T>(name: string, help: string, watched: Set<T>, read: (each: T) => number): void {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        let sum = 0;
        for (const each of watched) sum += read(each);
        this.set(sum);
      },
    });
  }

  const sandboxes = new Set<SandboxGauges>();
  summedGauge(
    "rewind_sandbox_warm_isolates",
    "Scripts kept warm in an isolate between steps.",
    sandboxes,
    (sandbox) => sandbox.warmCount,
  );
  summedGauge("rewind_sandbox_heap_used_bytes", "Heap used by the warm isolates' scripts.", sandboxes, (sandbox) =>
    sandbox.heapUsedBytes(),
  );
  const pools = new Set<McpPoolGauges>();
  summedGauge(
    "rewind_mcp_spare_sessions",
    "MCP sessions opened ahead, unused, for the next run of a server and its credentials.",
    pools,
    (pool) => pool.spareSessions,
  );

  const counters = new Set<() => Promise<OpenRunCounts>>();
  new Gauge({
    name: "rewind_runs_open",
    help: "Open runs of this task queue, by status (running or parked), from Temporal's visibility; the same in every API process.",
    labelNames: ["status"] as const,
    registers,
    async collect() {
      this.reset();
      if (counters.size === 0) return;
      try {
        const counts = await within(Promise.all([...counters].map((count) => count())), timeoutMs);
        this.set(
          { status: "running" },
          counts.reduce((sum, c) => sum + c.running, 0),
        );
        this.set(
          { status: "parked" },
          counts.reduce((sum, c) => sum + c.parked, 0),
        );
      } catch {
        // No answer from visibility: no series, rather than a number that is no longer true.
      }
    },
  });
  /** Made once the SDK's exporter exists: a process without the SDK's runtime (the API) has no such series. */
  let sdkUp: Gauge | undefined;

  const groupsSeen = new Set<string>();
  const maxGroups = options.maxGroups ?? 64;
  const groupLabel = (group: string): string => {
    if (groupsSeen.has(group)) return group;
    if (groupsSeen.size >= maxGroups) return "other";
    groupsSeen.add(group);
    return group;
  };

  return {
    contentType: registry.contentType,
    runStarted: () => runsStarted.inc(),
    runEnded(outcome: RunOutcome, failure?: string) {
      runsEnded.inc(failure === undefined ? { outcome } : { outcome, failure });
    },
    runContinued: () => runsContinued.inc(),
    runStartedByApi: (start) => apiStarts.inc({ start }),
    callParked: (reason) => callsParked.inc({ reason }),
    callAttempt(kind: CallKind, group: string, outcome: string, seconds: number) {
      const label = groupLabel(group);
      attempts.inc({ kind, group: label, outcome });
      attemptSeconds.observe({ kind, group: label }, seconds);
    },
    step: (start: StepStart, seconds: number) => stepSeconds.observe({ start }, seconds),
    payloads(operation, count, bytes) {
      payloadCount.inc({ operation }, count);
      payloadBytes.inc({ operation }, bytes);
    },
    watchSandbox(sandbox) {
      sandboxes.add(sandbox);
      return () => void sandboxes.delete(sandbox);
    },
    watchMcpPool(pool) {
      pools.add(pool);
      return () => void pools.delete(pool);
    },
    watchOpenRuns(count) {
      counters.add(count);
      return () => void counters.delete(count);
    },
    async scrape() {
      const url = options.sdkMetricsUrl?.();
      const sdk = url ? await sdkText(url, timeoutMs) : undefined;
      if (url) {
        sdkUp ??= new Gauge({
          name: "rewind_temporal_sdk_metrics_up",
          help: "1 when the Temporal SDK's runtime metrics follow in this scrape, 0 when its exporter did not answer.",
          registers,
        });
        sdkUp.set(sdk === undefined ? 0 : 1);
      }
      const own = await registry.metrics();
      return sdk ? `${own.endsWith("\n") ? own : `${own}\n`}${sdk}` : own;
    },
  };
}
