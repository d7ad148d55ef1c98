/**
 * Temporal's standard environment configuration, through the SDK's `@temporalio/envconfig` (the
 * one file that imports it): TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS
 * and TEMPORAL_TLS_* (client certificate and key, server CA, server name, as paths or data),
 * TEMPORAL_GRPC_META_*, and a profile of Temporal's TOML file (TEMPORAL_CONFIG_FILE, default
 * `~/.config/temporalio/temporal.toml`; TEMPORAL_PROFILE, default `default`), the variables
 * overriding the profile. The same settings the `temporal` CLI and every Temporal SDK read, so an
 * operator configures Rewind as any other Temporal client. It reads only the env it is given
 * (src/config.ts passes it), and certificate files once, here, so a bad path fails at start-up.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { loadClientConfigProfile, type ConfigDataSource } from "@temporalio/envconfig";
import type { TemporalTls } from "./connection.ts";

export interface TemporalProfile {
  address: string | undefined;
  namespace: string | undefined;
  apiKey: string | undefined;
  /** Unset: nothing said about TLS (an API key still turns it on); `false`: TEMPORAL_TLS=false. */
  tls: TemporalTls | boolean | undefined;
  grpcMetadata: Record<string, string> | undefined;
}

/** A setting of Temporal's environment configuration that cannot be used; the message names it. */
export class TemporalProfileError extends Error {
  override name = "TemporalProfileError";
}

type Env = Record<string, string | undefined>;

const PEM_SETTINGS = {
  clientCert: "TEMPORAL_TLS_CLIENT_CERT_PATH/_DATA (tls.client_cert_path/_data)",
  clientKey: "TEMPORAL_TLS_CLIENT_KEY_PATH/_DATA (tls.client_key_path/_data)",
  serverCACert: "TEMPORAL_TLS_SERVER_CA_CERT_PATH/_DATA (tls.server_ca_cert_path/_data)",
} as const;

/** The PEM a source holds; a missing file or one that is not PEM is an error naming the setting. */
function pem(source: ConfigDataSource | undefined, setting: string, cwd: string): Buffer | undefined {
  if (source === undefined) return undefined;
  let bytes: Buffer;
  if ("path" in source) {
    const file = path.resolve(cwd, source.path);
    try {
      bytes = readFileSync(file);
    } catch (error) {
      throw new TemporalProfileError(
        `${setting}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      );
    }
  } else {
    bytes = typeof source.data === "string" ? Buffer.from(source.data) : Buffer.from(source.data);
  }
  if (!bytes.toString("latin1").includes("-----BEGIN "))
    throw new TemporalProfileError(`${setting} must be PEM (-----BEGIN …-----)`);
  return bytes;
}

function defined(env: Env): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/**
 * Reads the profile the env selects, with the env's overrides applied.
 *
 * @example
 * readTemporalProfile({ TEMPORAL_ADDRESS: "ns.acct.tmprl.cloud:7233", TEMPORAL_API_KEY: "…" }, process.cwd())
 * // { address: "ns.acct.tmprl.cloud:7233", apiKey: "…", tls: undefined, … }
 */
export function readTemporalProfile(env: Env, cwd: string): TemporalProfile {
  let profile: ReturnType<typeof loadClientConfigProfile>;
  try {
    profile = loadClientConfigProfile({ overrideEnvVars: defined(env) });
  } catch (error) {
    const where = env["TEMPORAL_CONFIG_FILE"] ? ` (TEMPORAL_CONFIG_FILE=${env["TEMPORAL_CONFIG_FILE"]})` : "";
    throw new TemporalProfileError(
      `Temporal's client configuration${where}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const tls = profile.tls;
  let resolvedTls: TemporalProfile["tls"];
  if (tls === undefined) resolvedTls = undefined;
  else if (tls.disabled === true) resolvedTls = false;
  else {
    const crt = pem(tls.clientCert, PEM_SETTINGS.clientCert, cwd);
    const key = pem(tls.clientKey, PEM_SETTINGS.clientKey, cwd);
    if ((crt === undefined) !== (key === undefined)) {
      throw new TemporalProfileError(
        "TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH (or their _DATA forms) go together: set both for mTLS, or neither",
      );
    }
    const ca = pem(tls.serverCACert, PEM_SETTINGS.serverCACert, cwd);
    resolvedTls = {
      ...(tls.serverName ? { serverNameOverride: tls.serverName } : {}),
      ...(ca ? { serverRootCACertificate: ca } : {}),
      ...(crt && key ? { clientCertPair: { crt, key } } : {}),
    };
  }
  return {
    address: profile.address || undefined,
    namespace: profile.namespace || undefined,
    apiKey: profile.apiKey || undefined,
    tls: resolvedTls,
    grpcMetadata: profile.grpcMeta && Object.keys(profile.grpcMeta).length > 0 ? profile.grpcMeta : undefined,
  };
}
