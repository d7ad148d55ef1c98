/**
 * What Rewind measures, as the code that measures it sees it: small interfaces with one method
 * per fact, so activities, the sandbox, the payload store and the API record without knowing
 * Prometheus (src/metrics/prometheus.ts implements them; `NO_METRICS` records nothing). Labels
 * stay few and bounded: a tool's group, never a run id or a tool's arguments.
 */

/** How a run ended: the workflow's own end, seen by the worker that ran it. */
export type RunOutcome = "completed" | "failed" | "cancelled";

/** Kinds of calls a worker sends itself (host tools run in the harness's worker). */
export type CallKind = "mcp" | "http";

/** Steps of a script: `cold` replays the script from its journal, `warm` feeds a kept isolate. */
export type StepStart = "cold" | "warm";

export interface RunMetrics {
  /** A run's first execution started (not a continue-as-new). */
  runStarted(): void;
  /** A run ended; `failure` is its failure type (`ScriptFailed`, `LimitExceeded`, `ScriptStuck`) when failed. */
  runEnded(outcome: RunOutcome, failure?: string): void;
  /** A run continued as new (it goes on, with a fresh history). */
  runContinued(): void;
  /** A call was parked, waiting for the harness (`approval`, `schemaChanged`, …). */
  callParked(reason: string): void;
}

/** How the API started a run: `eager` when its first workflow task came back in the start's answer. */
export type RunStartKind = "eager" | "queued";

export interface StartMetrics {
  /** The API started a run (a repeat of an idempotent start is not counted). */
  runStartedByApi(kind: RunStartKind): void;
}

export interface CallMetrics {
  /** One attempt of a call this worker sent, by the call's group (`billing`, `http`) and outcome (`ok`, `toolFailed`, `Unreachable`, …). */
  callAttempt(kind: CallKind, group: string, outcome: string, seconds: number): void;
}

export interface StepMetrics {
  /** One step of a script in the sandbox. */
  step(start: StepStart, seconds: number): void;
}

export interface PayloadMetrics {
  /** Payloads written to (`store`) or read from (`retrieve`) the payload store, with their bytes. */
  payloads(operation: "store" | "retrieve", count: number, bytes: number): void;
}

/** What a worker's sandbox tells about itself when scraped. */
export interface SandboxGauges {
  readonly warmCount: number;
  /** Heap used by its warm isolates, in bytes. */
  heapUsedBytes(): number;
}

/** What a worker's MCP connection pool tells about itself when scraped. */
export interface McpPoolGauges {
  /** Sessions opened ahead, unused, for the next run of a server and its credentials. */
  readonly spareSessions: number;
}

/** Counts of open runs, asked of Temporal's visibility when scraped. */
export interface OpenRunCounts {
  running: number;
  parked: number;
}

export interface RewindMetrics extends RunMetrics, StartMetrics, CallMetrics, StepMetrics, PayloadMetrics {
  /** Reports this sandbox's gauges on every scrape until the returned function is called. */
  watchSandbox(sandbox: SandboxGauges): () => void;
  /** Reports this MCP pool's gauges on every scrape until the returned function is called. */
  watchMcpPool(pool: McpPoolGauges): () => void;
  /** Reports open runs on every scrape (the API), until the returned function is called. */
  watchOpenRuns(count: () => Promise<OpenRunCounts>): () => void;
}

const nothing = (): void => undefined;

/** Records nothing: the default of every component that takes metrics. */
export const NO_METRICS: RewindMetrics = {
  runStarted: nothing,
  runEnded: nothing,
  runContinued: nothing,
  callParked: nothing,
  runStartedByApi: nothing,
  callAttempt: nothing,
  step: nothing,
  payloads: nothing,
  watchSandbox: () => nothing,
  watchMcpPool: () => nothing,
  watchOpenRuns: () => nothing,
};
