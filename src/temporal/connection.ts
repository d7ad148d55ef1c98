/**
 * How every Rewind process reaches Temporal: the API, the worker, the CLI and the SDK's host-tool
 * worker build their connections here from one TemporalConnectionSettings (address, API key, TLS,
 * gRPC metadata — Temporal's standard environment configuration, read by src/config.ts), so a
 * cluster behind mTLS or Temporal Cloud works for all of them or for none. A connection that
 * fails says where it tried to go and how, never just "UNAVAILABLE".
 */
import type { Connection, ConnectionOptions } from "@temporalio/client";
import type { NativeConnection, NativeConnectionOptions } from "@temporalio/worker";
import type { TemporalSettings } from "../config.ts";
import { connectWithRetriesEndingBeforeClose } from "./retries-end-before-close.ts";

/**
 * TLS towards the cluster, shaped as the Temporal SDK's own TLSConfig (it is handed over as it
 * is); certificates and keys as PEM bytes, already read from their files.
 */
export interface TemporalTls {
  /** TEMPORAL_TLS_SERVER_NAME: the name the server's certificate is checked against (and SNI). */
  serverNameOverride?: string | undefined;
  /** TEMPORAL_TLS_SERVER_CA_CERT_*: the CA the server's certificate must chain to; unset: the system's roots. */
  serverRootCACertificate?: Buffer | undefined;
  /** TEMPORAL_TLS_CLIENT_CERT_* and TEMPORAL_TLS_CLIENT_KEY_*: the client certificate for mTLS. */
  clientCertPair?: { crt: Buffer; key: Buffer } | undefined;
}

/** Everything needed to open a connection to a Temporal frontend, whatever reads it from where. */
export interface TemporalConnectionSettings {
  /** `host:port` of the frontend. */
  address: string;
  /** TEMPORAL_API_KEY: sent as `Authorization: Bearer …`; implies TLS unless TLS is configured otherwise. */
  apiKey?: string | undefined;
  /** `true`: TLS with the system's roots; an object: TLS as it says; `false` or unset: plaintext. */
  tls?: TemporalTls | boolean | undefined;
  /** TEMPORAL_GRPC_META_*: extra gRPC headers on every request. */
  grpcMetadata?: Record<string, string> | undefined;
}

/**
 * The settings of the configured cluster, or of `address` when the caller picked it (the embedded
 * dev server's, which has no TLS: the configuration's TLS and key belong to TEMPORAL_ADDRESS only).
 */
export function connectionSettings(
  temporal: Omit<TemporalSettings, "namespace">,
  address?: string,
): TemporalConnectionSettings {
  if (address !== undefined && address !== temporal.address) return { address };
  if (temporal.address === undefined) throw new TypeError("no Temporal address: TEMPORAL_ADDRESS is not set");
  return { address: temporal.address, apiKey: temporal.apiKey, tls: temporal.tls, grpcMetadata: temporal.grpcMetadata };
}

/** What both kinds of connection are opened with: the address, TLS, API key and metadata given. */
function connectionFields(settings: TemporalConnectionSettings) {
  return {
    address: settings.address,
    ...(settings.tls !== undefined ? { tls: settings.tls } : {}),
    ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
    ...(settings.grpcMetadata !== undefined ? { metadata: settings.grpcMetadata } : {}),
  };
}

/** Options of `Connection.connect` (the client side: API, CLI, the worker's own client). */
export function clientConnectionOptions(settings: TemporalConnectionSettings): ConnectionOptions {
  return connectionFields(settings);
}

/** Options of `NativeConnection.connect` (what a Worker polls over: the Rewind and host-tool workers). */
export function nativeConnectionOptions(settings: TemporalConnectionSettings): NativeConnectionOptions {
  return connectionFields(settings);
}

/** A connection that could not be opened: the message names the address, the transport and the cause. */
export class TemporalUnreachableError extends Error {
  override name = "TemporalUnreachableError";
  /**
   * Whether nothing answered at all: the client's deadline passed and the native client, asked
   * again, had nothing to say either (a port that accepts connections and never speaks: a proxy
   * before its backend is up). A refusal or a diagnosed failure is not silent.
   */
  readonly silent: boolean;
  constructor(message: string, options: { cause: unknown; silent: boolean }) {
    super(message, { cause: options.cause });
    this.silent = options.silent;
  }
}

/** `TLS with a client certificate`, `plaintext`…: how a connection was attempted, for error messages. */
export function describeTransport(settings: TemporalConnectionSettings): string {
  const tls = settings.tls;
  if (tls === undefined || tls === false) return settings.apiKey !== undefined ? "TLS, API key" : "plaintext (no TLS)";
  const parts = ["TLS"];
  if (typeof tls === "object") {
    parts.push(tls.clientCertPair ? "client certificate" : "no client certificate");
    if (tls.serverRootCACertificate) parts.push("own CA");
    if (tls.serverNameOverride) parts.push(`server name ${tls.serverNameOverride}`);
  }
  if (settings.apiKey !== undefined) parts.push("API key");
  return parts.join(", ");
}

/**
 * The transport's own words, out of the Rust core's error text: `received fatal alert:
 * CertificateRequired`, `InvalidCertificate(NotValidForNameContext { … })`, `Connection refused`.
 */
function transportReason(message: string): string {
  const patterns = [
    /error: "([^"]+)"/, // Custom { kind: InvalidData, error: "received fatal alert: CertificateRequired" }
    /Custom \{ kind: \w+, error: (.+?) \}\)+\s*$/, // error: InvalidCertificate(NotValidForNameContext { … })
    /hyper::Error\(\w+, "([^"]+)"\)/, // hyper::Error(Canceled, "connection closed")
  ];
  for (const pattern of patterns) {
    const found = pattern.exec(message)?.[1];
    if (found) return found;
  }
  return message.split("\n")[0] ?? message;
}

/** What to check, by how the connection was attempted. */
function advice(settings: TemporalConnectionSettings): string {
  const tls = settings.tls;
  const tlsWithoutIdentity =
    (tls === true || (typeof tls === "object" && !tls.clientCertPair)) && settings.apiKey === undefined;
  if (tlsWithoutIdentity)
    return "check TEMPORAL_ADDRESS and TEMPORAL_TLS_*: a server that requires a client certificate needs TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH";
  return "check TEMPORAL_ADDRESS and the TEMPORAL_TLS_* / TEMPORAL_API_KEY settings";
}

function unreachable(settings: TemporalConnectionSettings, error: unknown, detail?: string): TemporalUnreachableError {
  const reason = transportReason(error instanceof Error ? error.message : String(error));
  return new TemporalUnreachableError(
    `cannot connect to Temporal at ${settings.address} (${describeTransport(settings)}): ${reason}${detail ? ` (${detail})` : ""}; ${advice(settings)}`,
    { cause: error, silent: detail === undefined && /before the deadline/i.test(reason) },
  );
}

/** The native client's answer to the same settings, within `ms`: undefined when it connects or is silent. */
async function nativeDiagnosis(settings: TemporalConnectionSettings, ms: number): Promise<string | undefined> {
  const { NativeConnection } = await import("@temporalio/worker");
  const attempt = NativeConnection.connect(nativeConnectionOptions(settings)).then(
    async (connection) => {
      await connection.close();
      return undefined;
    },
    (error: unknown) => transportReason(error instanceof Error ? error.message : String(error)),
  );
  const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms).unref());
  return Promise.race([attempt, timeout]);
}

/**
 * Opens a client connection; `connectTimeoutMs` bounds the first contact (default the SDK's 10 s).
 * The client only says it failed before the deadline, so a failure is retried once with the
 * native client, whose error names the cause (a TLS alert, a certificate for another name…).
 * Its close() waits for the retries under way (retries-end-before-close.ts).
 */
export async function connectClient(
  settings: TemporalConnectionSettings,
  connectTimeoutMs?: number,
): Promise<Connection> {
  try {
    return await connectWithRetriesEndingBeforeClose({
      ...clientConnectionOptions(settings),
      ...(connectTimeoutMs !== undefined ? { connectTimeout: connectTimeoutMs } : {}),
    });
  } catch (error) {
    throw unreachable(settings, error, await nativeDiagnosis(settings, 5_000).catch(() => undefined));
  }
}

/** Opens the native connection a Worker polls over. */
export async function connectNative(settings: TemporalConnectionSettings): Promise<NativeConnection> {
  const { NativeConnection } = await import("@temporalio/worker");
  try {
    return await NativeConnection.connect(nativeConnectionOptions(settings));
  } catch (error) {
    throw unreachable(settings, error);
  }
}
