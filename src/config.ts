/**
 * The only place that reads the environment. Everything else receives a typed Config (or a
 * slice of it) as an argument, so that tests and embedders can build one without touching
 * process.env, and so a bad value fails once, at start-up, with the variable's name.
 */
import { isIP } from "node:net";
import path from "node:path";
import type { TrustedTargets } from "./http-tool/index.ts";
import type { TemporalTls } from "./temporal/index.ts";
import { readTemporalProfile, TemporalProfileError } from "./temporal/envconfig.ts";
import { RUN_CONCURRENCY, parseDuration } from "./shared/index.ts";

export interface SandboxLimits {
  /** Heap limit of one script's isolate, in MB. Default 128. */
  memoryMb: number;
  /** CPU time one step of a script may use, in ms. Default 2000. */
  cpuMsPerStep: number;
}

export interface Config {
  /** Directory for the embedded stack's state: SQLite file, temporal CLI, keys. Default `.rewind`. */
  stateDir: string;
  /**
   * Started by an npm script (`npm start`: npm sets `npm_lifecycle_event`). `rewind dev` then
   * stops when npm is gone, even killed outright, instead of outliving it.
   */
  launchedByNpmScript: boolean;
  api: {
    host: string;
    port: number;
    /** API key → Rewind namespace. Empty: loopback callers are served without a key, as `default`. */
    keys: Map<string, string>;
    /**
     * REWIND_PUBLIC_URL: base URL harnesses reach the API at. Workers put it in the URLs
     * `webhook(name)` gives scripts, so a worker on another machine needs it. Default `http://{host}:{port}`.
     */
    publicUrl: string;
    /** Whether REWIND_PUBLIC_URL was set (false: publicUrl is the default, right only beside the API). */
    publicUrlSet: boolean;
    /**
     * REWIND_CODEC_CORS_ORIGINS: origins (comma-separated) whose pages may call the codec endpoint
     * (`/v1/codec`), i.e. where the Temporal Web UI is served. Unset: the origin of the UI the API
     * links runs to (the embedded dev server's under `npm start`).
     */
    codecCorsOrigins: string[] | undefined;
    /**
     * Type-checks run on a pool of worker threads, never on the API's: REWIND_TYPECHECK_THREADS
     * (at most, default 2; one starts at once, more while checks wait; one namespace holds at most all but one), REWIND_TYPECHECK_QUEUE (checks one namespace may have waiting, default 64),
     * REWIND_TYPECHECK_TIMEOUT_MS (one check's deadline, default 10 000) and
     * REWIND_TYPECHECK_MEMORY_MB (each thread's heap cap, default 512).
     */
    typeCheck: { threads: number; queuePerNamespace: number; deadlineMs: number; memoryMb: number };
    /**
     * REWIND_MCP_WAIT_MS: how long the MCP front door's `run_script` and `get_run` wait for a run
     * to end before they answer its id and status instead (default 20 000; 0 answers at once).
     */
    mcpWaitMs: number;
  };
  temporal: {
    /**
     * TEMPORAL_ADDRESS (or the address of the Temporal config file's profile): set, use that
     * cluster and start no dev server. See temporalSettings for how the connection is read.
     */
    address: string | undefined;
    namespace: string;
    /** TEMPORAL_API_KEY (or the profile's `api_key`); implies TLS. */
    apiKey: string | undefined;
    /** TEMPORAL_TLS, TEMPORAL_TLS_* (or the profile's `tls`): certificates already read; unset: plaintext unless an API key is set. */
    tls: TemporalTls | boolean | undefined;
    /** TEMPORAL_GRPC_META_* (or the profile's `grpc_meta`): extra gRPC headers. */
    grpcMetadata: Record<string, string> | undefined;
    taskQueue: string;
    /** Base URL of the Temporal Web UI, for run links. */
    uiUrl: string | undefined;
    cliPath: string | undefined;
    /** Worker Deployment version this worker serves (Worker Versioning); unset: versioning off. */
    deployment?: WorkerDeployment | undefined;
    /**
     * Set when the Worker Versioning settings name no version though some are there (a deployment
     * name without a build id, or the reverse): the sentence a worker refuses to start with. The
     * API serves no version and ignores them, so one env file can give every process
     * REWIND_DEPLOYMENT_NAME while each worker's own settings add its REWIND_BUILD_ID.
     */
    deploymentIncomplete?: string | undefined;
    /**
     * REWIND_CONNECT_TIMEOUT: how long `rewind worker` and `rewind api`, started while nothing
     * answers at TEMPORAL_ADDRESS, wait for the cluster before exiting non-zero (a duration: `30s`,
     * `5m`, or milliseconds). Unset: they wait for as long as it takes.
     */
    connectTimeoutMs?: number | undefined;
  };
  sandbox: SandboxLimits;
  /** Warm isolates kept per worker (LRU). Default 256. */
  warmIsolates: number;
  /** A warm isolate not stepped for this long is given back (0: never). Default 30 s. */
  warmIdleMs: number;
  /**
   * REWIND_SHUTDOWN_GRACE: told to stop, a worker stops polling at once and gives the calls it
   * has in flight this long to end before it cancels them (a cancelled call is sent again by
   * another worker under the same key, or ends `outcomeUnknown` if it is at most once). Default
   * 20 s, inside the 30 s a supervisor such as Kubernetes waits by default before SIGKILL.
   */
  shutdownGraceMs: number;
  /**
   * Runs whose workflow state a worker keeps in memory between their tasks (Temporal's sticky
   * cache; about half a megabyte each). A run beyond it is replayed from its history at its next
   * task. Default 500.
   */
  maxCachedWorkflows: number;
  /**
   * Calls a workflow task hands straight back to the worker that completed it (Temporal's eager
   * activity dispatch) instead of through the task queue. Default 16, a run's calls in flight;
   * 0 sends every call through the task queue.
   */
  eagerCalls: number;
  /**
   * An MCP session kept open, unused, for the next run of each server and credentials a run lately
   * opened one for, so that run's first call finds its session ready; closed when no run took it
   * within this long. 0 keeps none. Default 30 s.
   */
  spareSessionIdleMs: number;
  /**
   * Stack frames kept by errors and promises in the engine's workflow code. Temporal's SDK
   * captures a stack for every promise a workflow creates; a run creates a dozen a call, and
   * capturing them cost about as much CPU as the rest of the workflow code. Default 0: errors in
   * the workflow code carry their message only. Set 10 (V8's default) while debugging a failing
   * workflow task, and restart the worker: the task's next attempt shows where it failed.
   */
  workflowStackFrames: number;
  /** Runs continue as new after this many history events; unset: when Temporal suggests it. */
  continueAsNewAfterEvents: number | undefined;
  /**
   * The speed mechanisms on (all by default), each switched off by naming it in
   * REWIND_ACCELERATORS_OFF (`all` for every one). Off, a run takes the durable core's path: the
   * same journal, the same results, more round trips. Eager calls and spare sessions switched off
   * also set their sizes to 0 (`eagerCalls`, `spareSessionIdleMs`).
   */
  accelerators: Accelerators;
  /** Where a production deployment must not run with defaults (e.g. a generated secret key). */
  production: boolean;
  /** REWIND_SECRET_KEY (32 bytes, base64): seals credentials and webhook secrets. Unset: see secretKeyFile. */
  secretKey: Buffer | undefined;
  /** OpenTelemetry traces, from the standard OTEL_* variables; unset: no spans are recorded. */
  otel: OtelConfig | undefined;
  /** Events of the default namespace, unless it sets its own endpoint through the API. */
  events: { url: string; secret: string } | undefined;
  logLevel: "debug" | "info" | "warn" | "error";
  payloads: PayloadsConfig;
  /**
   * The outbound target policy for the URLs tenants choose (MCP servers, events endpoints): on
   * (`guarded`) when API keys are set, so the API and the worker each need REWIND_API_KEYS;
   * `trusted` (REWIND_TRUSTED_TARGETS) is what it lets through anyway. Default: none trusted.
   */
  outbound: { guarded: boolean; trusted: TrustedTargets };
  metrics: MetricsConfig;
}

/**
 * Prometheus metrics. Every API answers `GET /metrics` on its own port to loopback callers;
 * REWIND_METRICS_PORT opens a listener of its own (worker and API) that answers anyone who can
 * reach REWIND_METRICS_ADDRESS. Unset: no listener.
 */
export interface MetricsConfig {
  /** REWIND_METRICS_PORT: where `GET /metrics` is served; 0 picks a free port. */
  port: number | undefined;
  /** REWIND_METRICS_ADDRESS: the listener's address. Default `127.0.0.1`; `0.0.0.0` to be scraped from elsewhere. */
  address: string;
}

/** How spans travel to the collector: OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL. */
export type OtlpProtocol = "http/protobuf" | "http/json" | "grpc";

export interface OtelConfig {
  /** The traces endpoint: `<base>/v1/traces` over HTTP, the base itself (host:port) over gRPC. */
  url: string;
  /** Sent with every export (gRPC: as metadata). */
  headers: Record<string, string>;
  /** Default `http/protobuf`, as the OTLP exporter specification says. */
  protocol: OtlpProtocol;
  serviceName: string;
}

/** A Worker Deployment version: workers of one name and build id run the same code. */
export interface WorkerDeployment {
  /** REWIND_DEPLOYMENT_NAME: the deployment, the same for every version (e.g. `rewind`). */
  name: string;
  /** REWIND_BUILD_ID: this version of the code (e.g. a release tag or git commit). */
  buildId: string;
  /**
   * REWIND_VERSIONING_BEHAVIOR: `pinned` (default) keeps a run on the version that started it
   * until it ends; `auto-upgrade` moves open runs to the current version at their next task.
   */
  defaultBehavior: "pinned" | "auto-upgrade";
}

/** Where payloads over the threshold live (Temporal's External Storage): REWIND_PAYLOAD_STORE. */
export type PayloadStoreConfig = { kind: "file"; dir: string } | { kind: "s3"; bucket: string; prefix: string };

export interface PayloadsConfig {
  store: PayloadStoreConfig;
  /** REWIND_PAYLOAD_THRESHOLD: payloads larger than this many bytes are stored outside history. Default 256 KiB. */
  thresholdBytes: number;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

/** A duration setting (`30s`, `5m`, or milliseconds), unset when empty. */
function duration(env: Env, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const parsed = parseDuration(raw);
  if ("error" in parsed) throw new ConfigError(`${name}: ${parsed.error}`);
  return parsed.ms;
}

function parseApiKeys(raw: string | undefined): Map<string, string> {
  const keys = new Map<string, string>();
  if (!raw) return keys;
  for (const entry of raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [key, namespace = "default"] = entry.split(":");
    if (!key || key.length < 16)
      throw new ConfigError("REWIND_API_KEYS entries are key[:namespace], keys of at least 16 characters");
    if (!/^[a-z0-9][a-z0-9_-]{0,62}$/i.test(namespace))
      throw new ConfigError(`REWIND_API_KEYS: "${namespace}" is not a valid namespace name`);
    keys.set(key, namespace);
  }
  return keys;
}

/** How long a stopping worker lets its calls in flight end unless REWIND_SHUTDOWN_GRACE says otherwise. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 20_000;

/** How long an unused spare MCP session is kept unless REWIND_SPARE_SESSION_SECONDS says otherwise. */
export const DEFAULT_SPARE_SESSION_IDLE_MS = 30_000;

/** Stack frames the workflow code keeps unless REWIND_WORKFLOW_STACK_FRAMES says otherwise. */
export const DEFAULT_WORKFLOW_STACK_FRAMES = 0;

/** Runs a worker keeps in Temporal's sticky cache unless REWIND_MAX_CACHED_WORKFLOWS says otherwise. */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 500;

/**
 * Calls a workflow task may hand straight back to its worker unless REWIND_EAGER_CALLS says
 * otherwise: as many as a run may have in flight (`RUN_CONCURRENCY`). Temporal's default is 3,
 * so a step that issued 16 calls sent 13 of them through the task queue's matching, where
 * another worker could take them; their results came back without a speculative step, and each
 * such result cost the run a cold replay of its journal on the worker holding its isolate.
 */
export const DEFAULT_EAGER_CALLS = RUN_CONCURRENCY;

const TRUSTED_TARGETS_FORMAT =
  "REWIND_TRUSTED_TARGETS entries are host names (mcp.internal, *.corp.example), addresses (10.0.0.5, ::1) or CIDRs (10.0.0.0/8, fd00::/8), comma-separated";

/** One entry's range, `address/prefix`, or undefined when the entry is not an address or range. */
function trustedRange(entry: string): string | undefined {
  const [rawAddress = "", prefix, extra] = entry.split("/");
  const address = rawAddress.replace(/^\[(.*)\]$/, "$1");
  const family = address.includes("%") ? 0 : isIP(address); // a zone id names an interface, not a range
  if (family === 0 || extra !== undefined) return undefined;
  const max = family === 4 ? 32 : 128;
  if (prefix === undefined) return `${address}/${max}`;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max)
    throw new ConfigError(`${TRUSTED_TARGETS_FORMAT}; "${entry}" has a prefix outside 0-${max}`);
  return `${address}/${Number(prefix)}`;
}

function trustedTargets(raw: string | undefined): TrustedTargets {
  const targets: TrustedTargets = { hosts: [], cidrs: [] };
  for (const entry of (raw ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const range = trustedRange(entry);
    if (range) {
      targets.cidrs.push(range);
      continue;
    }
    const wildcard = entry.startsWith("*.");
    const name = wildcard ? entry.slice(2) : entry;
    let url: URL | undefined;
    try {
      url = /^[^/?#@\\:[\]]+$/.test(name) ? new URL(`http://${name}/`) : undefined;
    } catch {
      url = undefined;
    }
    const host = url?.hostname.replace(/\.$/, "") ?? "";
    const isName = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/.test(host);
    if (!isName && isIP(host) === 0) throw new ConfigError(`${TRUSTED_TARGETS_FORMAT}, got "${entry}"`);
    // The URL parser reads 127.1, 2130706433 and 0x7f000001 as 127.0.0.1: such a name is an address.
    if (isIP(host) !== 0) {
      if (wildcard) throw new ConfigError(`${TRUSTED_TARGETS_FORMAT}; "${entry}" puts a wildcard on an address`);
      targets.cidrs.push(`${host}/32`);
      continue;
    }
    targets.hosts.push(wildcard ? `*.${host}` : host);
  }
  return targets;
}

function codecCorsOrigins(raw: string | undefined): string[] | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  return raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      let url: URL | undefined;
      try {
        url = new URL(entry);
      } catch {
        url = undefined;
      }
      if (
        !url ||
        !/^https?:$/.test(url.protocol) ||
        url.pathname !== "/" ||
        url.search !== "" ||
        url.hash !== "" ||
        url.username !== ""
      ) {
        throw new ConfigError(
          `REWIND_CODEC_CORS_ORIGINS entries are origins such as http://127.0.0.1:8233 (scheme, host and port, no path), got "${entry}"`,
        );
      }
      return url.origin;
    });
}

function logLevel(raw: string | undefined): Config["logLevel"] {
  const level = raw ?? "info";
  if (level === "debug" || level === "info" || level === "warn" || level === "error") return level;
  throw new ConfigError(`REWIND_LOG_LEVEL must be debug, info, warn or error, got "${level}"`);
}

function secretKey(raw: string | undefined): Buffer | undefined {
  if (!raw) return undefined;
  const key = Buffer.from(raw, "base64");
  if (key.length !== 32)
    throw new ConfigError("REWIND_SECRET_KEY must be 32 bytes, base64-encoded (e.g. `openssl rand -base64 32`)");
  return key;
}

function events(env: Env): Config["events"] {
  const url = env["REWIND_EVENTS_URL"];
  const secret = env["REWIND_EVENTS_SECRET"];
  if (!url && !secret) return undefined;
  if (!url || !secret) throw new ConfigError("REWIND_EVENTS_URL and REWIND_EVENTS_SECRET go together");
  if (!/^https?:\/\//.test(url)) throw new ConfigError("REWIND_EVENTS_URL must be an http(s) URL");
  if (!/^whsec_[A-Za-z0-9+/]{16,}={0,2}$/.test(secret))
    throw new ConfigError("REWIND_EVENTS_SECRET must be a Standard Webhooks secret (whsec_ followed by base64)");
  return { url, secret };
}

/**
 * Worker Versioning's settings: the version they name, or why they name none when some are set
 * (only a worker needs them whole: see `deploymentIncomplete`). A value that is set is checked
 * whatever the process.
 */
function deployment(env: Env): Pick<Config["temporal"], "deployment" | "deploymentIncomplete"> {
  const name = env["REWIND_DEPLOYMENT_NAME"] || undefined;
  const buildId = env["REWIND_BUILD_ID"] || undefined;
  const behavior = env["REWIND_VERSIONING_BEHAVIOR"] || undefined;
  if (behavior !== undefined && behavior !== "pinned" && behavior !== "auto-upgrade")
    throw new ConfigError(`REWIND_VERSIONING_BEHAVIOR must be pinned or auto-upgrade, got "${behavior}"`);
  if (!name && !buildId) {
    return behavior
      ? {
          deploymentIncomplete:
            "REWIND_VERSIONING_BEHAVIOR needs REWIND_DEPLOYMENT_NAME and REWIND_BUILD_ID (it only applies to a versioned worker)",
        }
      : {};
  }
  // The server's rules: a version is named `<deployment>.<build id>` (or with `:`), so the name
  // holds neither; names starting with `__` are its own (e.g. `__unversioned__`).
  if (name !== undefined && !/^(?!__)[^\s.:]{1,255}$/.test(name)) {
    throw new ConfigError(
      `REWIND_DEPLOYMENT_NAME must be at most 255 characters without spaces, "." or ":", not starting with "__", got "${name}"`,
    );
  }
  if (buildId !== undefined && !/^(?!__)\S{1,255}$/.test(buildId)) {
    throw new ConfigError(
      `REWIND_BUILD_ID must be at most 255 characters without spaces, not starting with "__", got "${buildId}"`,
    );
  }
  if (!name || !buildId)
    return {
      deploymentIncomplete:
        "REWIND_DEPLOYMENT_NAME and REWIND_BUILD_ID go together: set both to run a versioned worker, or neither",
    };
  return { deployment: { name, buildId, defaultBehavior: behavior ?? "pinned" } };
}

const OTLP_PROTOCOLS: readonly OtlpProtocol[] = ["http/protobuf", "http/json", "grpc"];

function otlpProtocol(env: Env): OtlpProtocol {
  const name = env["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"]
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const raw = (env[name] ?? "").trim();
  if (raw === "") return "http/protobuf";
  const protocol = OTLP_PROTOCOLS.find((known) => known === raw);
  if (!protocol) throw new ConfigError(`${name} must be http/protobuf (the default), http/json or grpc, got "${raw}"`);
  return protocol;
}

function otel(env: Env): Config["otel"] {
  if (env["OTEL_SDK_DISABLED"] === "true" || env["OTEL_TRACES_EXPORTER"] === "none") return undefined;
  const protocol = otlpProtocol(env);
  const traces = env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"];
  const base = env["OTEL_EXPORTER_OTLP_ENDPOINT"];
  // Over HTTP the base endpoint takes the signal's path; gRPC has no paths, only a host and port.
  const url = traces || (base ? (protocol === "grpc" ? base : `${base.replace(/\/+$/, "")}/v1/traces`) : undefined);
  if (!url) return undefined;
  if (!/^https?:\/\//.test(url)) throw new ConfigError("OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT must be an http(s) URL");
  const headers: Record<string, string> = {};
  for (const pair of (env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"] ?? env["OTEL_EXPORTER_OTLP_HEADERS"] ?? "")
    .split(",")
    .filter(Boolean)) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new ConfigError("OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs separated by commas");
    headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return { url, headers, protocol, serviceName: env["OTEL_SERVICE_NAME"] || "rewind" };
}

function metrics(env: Env): MetricsConfig {
  const raw = env["REWIND_METRICS_ADDRESS"] || undefined;
  const port = env["REWIND_METRICS_PORT"] ? integer(env, "REWIND_METRICS_PORT", 0, 0, 65535) : undefined;
  if (raw !== undefined && port === undefined)
    throw new ConfigError("REWIND_METRICS_ADDRESS needs REWIND_METRICS_PORT (the address of the metrics listener)");
  const address = (raw ?? "127.0.0.1").replace(/^\[(.*)\]$/, "$1");
  if (isIP(address) === 0 && !/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(address)) {
    throw new ConfigError(`REWIND_METRICS_ADDRESS must be an IP address or a host name (e.g. 0.0.0.0), got "${raw}"`);
  }
  return { port, address };
}

function payloadStore(raw: string | undefined, stateDir: string, cwd: string): PayloadStoreConfig {
  if (raw === undefined || raw === "") return { kind: "file", dir: path.join(stateDir, "payloads") };
  if (raw.startsWith("file:")) {
    const dir = raw.slice("file:".length).replace(/^\/\/(?=\/)/, "");
    if (dir === "")
      throw new ConfigError("REWIND_PAYLOAD_STORE=file: needs a directory, e.g. file:/var/lib/rewind/payloads");
    return { kind: "file", dir: path.resolve(cwd, dir) };
  }
  const s3 = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(raw);
  if (s3) return { kind: "s3", bucket: s3[1] ?? "", prefix: (s3[2] ?? "").replace(/\/+$/, "") };
  throw new ConfigError(`REWIND_PAYLOAD_STORE must be file:<directory> or s3://<bucket>[/<prefix>], got "${raw}"`);
}

/** The cluster and how to reach it: Config["temporal"]'s connection fields, without Rewind's own. */
export type TemporalSettings = Pick<Config["temporal"], "address" | "namespace" | "apiKey" | "tls" | "grpcMetadata">;

/**
 * Temporal's standard environment configuration (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
 * TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_GRPC_META_*, and a profile of Temporal's TOML file
 * named by TEMPORAL_CONFIG_FILE / TEMPORAL_PROFILE), as every Temporal client reads it. Exported
 * for the SDK's host-tool worker, which is given the env explicitly. Throws ConfigError.
 */
export function temporalSettings(env: Env = process.env, cwd: string = process.cwd()): TemporalSettings {
  let profile: ReturnType<typeof readTemporalProfile>;
  try {
    profile = readTemporalProfile(env, cwd);
  } catch (error) {
    if (error instanceof TemporalProfileError) throw new ConfigError(error.message);
    throw error;
  }
  if (!profile.address && (profile.apiKey !== undefined || (profile.tls !== undefined && profile.tls !== false))) {
    throw new ConfigError(
      "TEMPORAL_API_KEY and TEMPORAL_TLS_* are settings of a cluster: set TEMPORAL_ADDRESS too (without it Rewind starts its own dev server, which has no TLS)",
    );
  }
  return {
    address: profile.address,
    namespace: profile.namespace ?? "default",
    apiKey: profile.apiKey,
    tls: profile.tls,
    grpcMetadata: profile.grpcMetadata,
  };
}

/**
 * The environment's Temporal settings as they are written (TEMPORAL_*: address, namespace, TLS,
 * API key, a profile of Temporal's TOML file), for the drivers that start Rewind processes on a
 * cluster they are pointed at (the soak, the bench): they give every process these, with the
 * address and namespace of their own flags on top.
 */
export function temporalEnvironment(env: Env = process.env): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] => entry[0].startsWith("TEMPORAL_") && entry[1] !== undefined,
    ),
  );
}

function publicUrl(raw: string | undefined, fallback: string): string {
  if (raw === undefined || raw === "") return fallback;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (
    !url ||
    !/^https?:$/.test(url.protocol) ||
    url.search !== "" ||
    url.hash !== "" ||
    url.username !== "" ||
    url.password !== ""
  ) {
    throw new ConfigError(
      `REWIND_PUBLIC_URL must be the http(s) URL harnesses reach the API at, without query or credentials (e.g. https://rewind.example.com), got "${raw}"`,
    );
  }
  return raw.replace(/\/+$/, "");
}

/**
 * The accelerators, by the name REWIND_ACCELERATORS_OFF knows them by (docs/architecture.md has
 * a row for each: what it saves and the bench figure that keeps it).
 */
export const ACCELERATORS = [
  "speculative-steps",
  "api-first-step",
  "eager-start",
  "session-opener",
  "spare-sessions",
  "eager-calls",
] as const;
/**
 * Accelerators measured and removed because they saved nothing (docs/architecture.md): naming
 * one in REWIND_ACCELERATORS_OFF still works and does nothing, so a deployment's settings from an
 * earlier release keep starting.
 */
const RETIRED_ACCELERATORS: readonly string[] = ["session-queues", "isolate-pool"];
export type AcceleratorName = (typeof ACCELERATORS)[number];
/** Which accelerators are on. */
export type Accelerators = Record<AcceleratorName, boolean>;

/**
 * Which accelerators are on, read from REWIND_ACCELERATORS_OFF: a comma-separated list of
 * accelerators to switch off, or `all`.
 */
export function parseAccelerators(raw: string | undefined): Accelerators {
  const names = (raw ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  const off = new Set<string>(names.includes("all") ? ACCELERATORS : names);
  for (const name of off) {
    if (!(ACCELERATORS as readonly string[]).includes(name) && !RETIRED_ACCELERATORS.includes(name))
      throw new ConfigError(
        `REWIND_ACCELERATORS_OFF: "${name}" is not an accelerator; the names are all, ${ACCELERATORS.join(", ")}`,
      );
  }
  return Object.fromEntries(ACCELERATORS.map((name) => [name, !off.has(name)])) as Accelerators;
}

/** Reads and validates the environment. Throws ConfigError naming the variable at fault. */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const host = env["REWIND_HOST"] ?? "127.0.0.1";
  const port = integer(env, "REWIND_PORT", 8787, 0, 65535);
  const stateDir = path.resolve(cwd, env["REWIND_STATE_DIR"] ?? ".rewind");
  const keys = parseApiKeys(env["REWIND_API_KEYS"]);
  const accelerators = parseAccelerators(env["REWIND_ACCELERATORS_OFF"]);
  return {
    stateDir,
    launchedByNpmScript: Boolean(env["npm_lifecycle_event"]),
    api: {
      host,
      port,
      keys,
      publicUrl: publicUrl(env["REWIND_PUBLIC_URL"], `http://${host.includes(":") ? `[${host}]` : host}:${port}`),
      publicUrlSet: Boolean(env["REWIND_PUBLIC_URL"]),
      codecCorsOrigins: codecCorsOrigins(env["REWIND_CODEC_CORS_ORIGINS"]),
      typeCheck: {
        threads: integer(env, "REWIND_TYPECHECK_THREADS", 2, 1, 64),
        queuePerNamespace: integer(env, "REWIND_TYPECHECK_QUEUE", 64, 1, 10_000),
        deadlineMs: integer(env, "REWIND_TYPECHECK_TIMEOUT_MS", 10_000, 100, 600_000),
        memoryMb: integer(env, "REWIND_TYPECHECK_MEMORY_MB", 512, 64, 16_384),
      },
      mcpWaitMs: integer(env, "REWIND_MCP_WAIT_MS", 20_000, 0, 600_000),
    },
    temporal: {
      ...temporalSettings(env, cwd),
      taskQueue: env["REWIND_TASK_QUEUE"] ?? "rewind",
      uiUrl: env["TEMPORAL_UI_URL"] || undefined,
      cliPath: env["TEMPORAL_CLI_PATH"] || undefined,
      ...deployment(env),
      connectTimeoutMs: duration(env, "REWIND_CONNECT_TIMEOUT"),
    },
    sandbox: {
      memoryMb: integer(env, "REWIND_SANDBOX_MEMORY_MB", 128, 16, 8192),
      cpuMsPerStep: integer(env, "REWIND_SANDBOX_CPU_MS", 2000, 10, 600_000),
    },
    warmIsolates: integer(env, "REWIND_WARM_ISOLATES", 256, 0, 100_000),
    warmIdleMs: integer(env, "REWIND_WARM_IDLE_SECONDS", 30, 0, 86_400) * 1000,
    shutdownGraceMs: duration(env, "REWIND_SHUTDOWN_GRACE") ?? DEFAULT_SHUTDOWN_GRACE_MS,
    maxCachedWorkflows: integer(env, "REWIND_MAX_CACHED_WORKFLOWS", DEFAULT_MAX_CACHED_WORKFLOWS, 1, 1_000_000),
    eagerCalls: accelerators["eager-calls"] ? integer(env, "REWIND_EAGER_CALLS", DEFAULT_EAGER_CALLS, 0, 1_000) : 0,
    spareSessionIdleMs: accelerators["spare-sessions"]
      ? integer(env, "REWIND_SPARE_SESSION_SECONDS", DEFAULT_SPARE_SESSION_IDLE_MS / 1000, 0, 3_600) * 1000
      : 0,
    workflowStackFrames: integer(env, "REWIND_WORKFLOW_STACK_FRAMES", DEFAULT_WORKFLOW_STACK_FRAMES, 0, 200),
    continueAsNewAfterEvents: env["REWIND_CONTINUE_AS_NEW_EVENTS"]
      ? integer(env, "REWIND_CONTINUE_AS_NEW_EVENTS", 0, 50, 1_000_000)
      : undefined,
    accelerators,
    production: env["NODE_ENV"] === "production",
    secretKey: secretKey(env["REWIND_SECRET_KEY"]),
    events: events(env),
    otel: otel(env),
    logLevel: logLevel(env["REWIND_LOG_LEVEL"]),
    payloads: {
      store: payloadStore(env["REWIND_PAYLOAD_STORE"], stateDir, cwd),
      thresholdBytes: integer(env, "REWIND_PAYLOAD_THRESHOLD", 256 * 1024, 1024, 2 * 1024 * 1024),
    },
    outbound: { guarded: keys.size > 0, trusted: trustedTargets(env["REWIND_TRUSTED_TARGETS"]) },
    metrics: metrics(env),
  };
}

// ---------------------------------------------------------------------------------------------
// Client side: what the `rewind` commands that talk to a running API need (run, runs, toolsets…).
// Separate from loadConfig so that a client never trips over a server-only setting.

export const DEFAULT_API_URL = "http://127.0.0.1:8787";

export interface ClientConfig {
  /** Base URL of the Rewind API. Default `DEFAULT_API_URL`. */
  url: string;
  /** Sent as `Authorization: Bearer <key>` when set. */
  apiKey: string | undefined;
  /** What `${NAME}` in a toolset document the CLI registers stands for: the environment's NAME. */
  variable(name: string): string | undefined;
}

/**
 * Reads REWIND_URL and REWIND_API_KEY; `url` (the CLI's `--url`) wins over REWIND_URL. Throws
 * ConfigError naming the setting at fault.
 */
export function loadClientConfig(env: Env = process.env, url?: string): ClientConfig {
  const raw = url ?? (env["REWIND_URL"] || DEFAULT_API_URL);
  const name = url === undefined ? "REWIND_URL" : "--url";
  if (!/^https?:\/\/[^/]/.test(raw)) throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  return {
    url: raw.replace(/\/+$/, ""),
    apiKey: env["REWIND_API_KEY"] || undefined,
    variable: (variable) => env[variable],
  };
}

// ---------------------------------------------------------------------------------------------
// The examples (`npm run example`, `npm run example:server`): where their MCP server listens.

export interface ExampleConfig {
  /** REWIND_EXAMPLE_PORT: the example tickets MCP server's port on 127.0.0.1. Default 8788. */
  serverPort: number;
}

/** Reads REWIND_EXAMPLE_PORT. Throws ConfigError naming the variable at fault. */
export function loadExampleConfig(env: Env = process.env): ExampleConfig {
  return { serverPort: integer(env, "REWIND_EXAMPLE_PORT", 8788, 1, 65535) };
}
