/**
 * How every Rewind process reaches Temporal: the API, the worker, the CLI and the SDK's host-tool
 * worker build their connections here from one TemporalConnectionSettings (address, API key, TLS,
 * gRPC metadata — Temporal's standard environment configuration, read by src/config.ts), so a
 * cluster behind mTLS or Temporal Cloud works for all of them or for none. A connection that
 * fails says where it tried to go and how, never just "UNAVAILABLE".
 */
import { Connection, type ConnectionOptions } from "@temporalio/client";
import { NativeConnection, type NativeConnectionOptions } from "@temporalio/worker";
import type { TemporalSettings } from "../config.ts";

/** TLS towards the cluster; certificates and keys as PEM bytes, already read from their files. */
export interface TemporalTls {
  /** TEMPORAL_TLS_SERVER_NAME: the name the server's certificate is checked against (and SNI). */
  serverName?: string | undefined;
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
export function connectionSettings(temporal: Omit<TemporalSettings, "namespace">, address?: string): TemporalConnectionSettings {
  if (address !== undefined && address !== temporal.address) return { address };
  if (temporal.address === undefined) throw new TypeError("no Temporal address: TEMPORAL_ADDRESS is not set");
  return { address: temporal.address, apiKey: temporal.apiKey, tls: temporal.tls, grpcMetadata: temporal.grpcMetadata };
}

/** Options of `Connection.connect` (the client side: API, CLI, the worker's own client). */
export function clientConnectionOptions(settings: TemporalConnectionSettings): ConnectionOptions {
  return {
    address: settings.address,
    ...(settings.tls !== undefined ? { tls: settings.tls } : {}),
    ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
    ...(settings.grpcMetadata !== undefined ? { metadata: settings.grpcMetadata } : {}),
  };
}

/** Options of `NativeConnection.connect` (what a Worker polls over: the Rewind and host-tool workers). */
export function nativeConnectionOptions(settings: TemporalConnectionSettings): NativeConnectionOptions {
  return {
    address: settings.address,
    ...(settings.tls !== undefined ? { tls: settings.tls } : {}),
    ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
    ...(settings.grpcMetadata !== undefined ? { metadata: settings.grpcMetadata } : {}),
  };
}

/** A connection that could not be opened: the message names the address, the transport and the cause. */
export class TemporalUnreachableError extends Error {
  override name = "TemporalUnreachableError";
}

/** `TLS with a client certificate`, `plaintext`…: how a connection was attempted, for error messages. */
export function describeTransport(settings: TemporalConnectionSettings): string {
  const tls = settings.tls;
  if (tls === undefined || tls === false) return settings.apiKey !== undefined ? "TLS, API key" : "plaintext (no TLS)";
  const parts = ["TLS"];
  if (typeof tls === "object") {
    parts.push(tls.clientCertPair ? "client certificate" : "no client certificate");
    if (tls.serverRootCACertificate) parts.push("own CA");
    if (tls.serverName) parts.push(`server name ${tls.serverName}`);
  }
  if (settings.apiKey !== undefined) parts.push("API key");
  return parts.join(", ");
}

function unreachable(settings: TemporalConnectionSettings, error: unknown): TemporalUnreachableError {
  const reason = (error instanceof Error ? error.message : String(error)).split("\n")[0];
  return new TemporalUnreachableError(
    `cannot connect to Temporal at ${settings.address} (${describeTransport(settings)}): ${reason}; check TEMPORAL_ADDRESS and the TEMPORAL_TLS_* / TEMPORAL_API_KEY settings`,
    { cause: error },
  );
}

/** Opens a client connection; `connectTimeoutMs` bounds the first contact (default the SDK's 10 s). */
export async function connectClient(settings: TemporalConnectionSettings, connectTimeoutMs?: number): Promise<Connection> {
  try {
    return await Connection.connect({ ...clientConnectionOptions(settings), ...(connectTimeoutMs !== undefined ? { connectTimeout: connectTimeoutMs } : {}) });
  } catch (error) {
    throw unreachable(settings, error);
  }
}

/** Opens the native connection a Worker polls over. */
export async function connectNative(settings: TemporalConnectionSettings): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect(nativeConnectionOptions(settings));
  } catch (error) {
    throw unreachable(settings, error);
  }
}
