/**
 * Temporal's standard environment configuration as Rewind reads it (src/config.ts through
 * @temporalio/envconfig): the variables, a profile of Temporal's TOML file and the variables over
 * it, certificate files read once, and every setting that cannot work refused at start-up with
 * the variable's name. What the settings become on the wire is tested against a TLS cluster in
 * test/deploy/tls-cluster.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, temporalSettings } from "../../src/config.ts";
import { clientConnectionOptions, connectionSettings, nativeConnectionOptions } from "../../src/temporal/connection.ts";

const dir = mkdtempSync(path.join(tmpdir(), "rewind-settings-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pem = (label: string, body: string) =>
  `-----BEGIN ${label}-----\n${Buffer.from(body).toString("base64")}\n-----END ${label}-----\n`;
const file = (name: string, text: string) => {
  const at = path.join(dir, name);
  writeFileSync(at, text);
  return at;
};
const CERT = file("client.pem", pem("CERTIFICATE", "client cert"));
const KEY = file("client.key", pem("PRIVATE KEY", "client key"));
const CA = file("ca.pem", pem("CERTIFICATE", "the CA"));

describe("Temporal's environment configuration", () => {
  it("reads address, namespace, API key and gRPC headers from the standard variables", () => {
    const settings = temporalSettings(
      {
        TEMPORAL_ADDRESS: "ns.acct.tmprl.cloud:7233",
        TEMPORAL_NAMESPACE: "ns.acct",
        TEMPORAL_API_KEY: "secret-key",
        TEMPORAL_GRPC_META_X_TENANT: "blue",
      },
      dir,
    );
    expect(settings).toEqual({
      address: "ns.acct.tmprl.cloud:7233",
      namespace: "ns.acct",
      apiKey: "secret-key",
      tls: undefined,
      grpcMetadata: { "x-tenant": "blue" },
    });
    // The SDK turns TLS on for an API key unless TLS is switched off explicitly.
    expect(clientConnectionOptions(connectionSettings(settings))).toEqual({
      address: "ns.acct.tmprl.cloud:7233",
      apiKey: "secret-key",
      metadata: { "x-tenant": "blue" },
    });
  });

  it("reads the client certificate, key and server CA from their files, and the server name", () => {
    const settings = temporalSettings(
      {
        TEMPORAL_ADDRESS: "temporal.internal:7233",
        TEMPORAL_TLS_CLIENT_CERT_PATH: CERT,
        TEMPORAL_TLS_CLIENT_KEY_PATH: "client.key", // relative to the working directory
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: CA,
        TEMPORAL_TLS_SERVER_NAME: "frontend.temporal.internal",
      },
      dir,
    );
    expect(settings.tls).toEqual({
      serverNameOverride: "frontend.temporal.internal",
      serverRootCACertificate: Buffer.from(pem("CERTIFICATE", "the CA")),
      clientCertPair: {
        crt: Buffer.from(pem("CERTIFICATE", "client cert")),
        key: Buffer.from(pem("PRIVATE KEY", "client key")),
      },
    });
    const native = nativeConnectionOptions(connectionSettings(settings));
    expect(native.tls).toBe(settings.tls);
    expect(native.address).toBe("temporal.internal:7233");
  });

  it("takes certificates as data too, and TEMPORAL_TLS=false turns TLS off even with an API key", () => {
    const data = temporalSettings(
      {
        TEMPORAL_ADDRESS: "a:7233",
        TEMPORAL_TLS_CLIENT_CERT_DATA: pem("CERTIFICATE", "c"),
        TEMPORAL_TLS_CLIENT_KEY_DATA: pem("PRIVATE KEY", "k"),
      },
      dir,
    );
    expect(data.tls).toEqual({
      clientCertPair: { crt: Buffer.from(pem("CERTIFICATE", "c")), key: Buffer.from(pem("PRIVATE KEY", "k")) },
    });
    const off = temporalSettings({ TEMPORAL_ADDRESS: "a:7233", TEMPORAL_API_KEY: "k", TEMPORAL_TLS: "false" }, dir);
    expect(off.tls).toBe(false);
    expect(clientConnectionOptions(connectionSettings(off)).tls).toBe(false);
  });

  it("reads a profile of Temporal's TOML file, with the variables over it", () => {
    const toml = file(
      "temporal.toml",
      [
        "[profile.default]",
        'address = "localhost:7233"',
        "",
        "[profile.prod]",
        'address = "prod.internal:7233"',
        'namespace = "rewind-prod"',
        'api_key = "from-file"',
        "[profile.prod.tls]",
        `client_cert_path = "${CERT}"`,
        `client_key_path = "${KEY}"`,
        'server_name = "prod"',
      ].join("\n"),
    );
    const prod = temporalSettings(
      { TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: "prod", TEMPORAL_API_KEY: "from-env" },
      dir,
    );
    expect(prod).toMatchObject({
      address: "prod.internal:7233",
      namespace: "rewind-prod",
      apiKey: "from-env",
      tls: { serverNameOverride: "prod" },
    });
    expect(temporalSettings({ TEMPORAL_CONFIG_FILE: toml }, dir)).toMatchObject({
      address: "localhost:7233",
      namespace: "default",
    });
    expect(() => temporalSettings({ TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: "staging" }, dir)).toThrow(
      /TEMPORAL_CONFIG_FILE=.*Profile 'staging' not found/,
    );
  });

  it("reads the default file under XDG_CONFIG_HOME, so `temporal` CLI users configure Rewind the same way", () => {
    const home = path.join(dir, "xdg");
    const configDir = path.join(home, "temporalio");
    mkdirSync(configDir, { recursive: true });
    writeFileSync(path.join(configDir, "temporal.toml"), '[profile.default]\naddress = "from-default-file:7233"\n');
    expect(loadConfig({ XDG_CONFIG_HOME: home }, dir).temporal.address).toBe("from-default-file:7233");
    expect(loadConfig({}, dir).temporal.address).toBeUndefined();
  });

  it("refuses what cannot work, naming the setting", () => {
    const refused = (env: Record<string, string>) => {
      try {
        temporalSettings(env, dir);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error("accepted");
    };
    expect(
      refused({
        TEMPORAL_ADDRESS: "a:1",
        TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, "missing.pem"),
        TEMPORAL_TLS_CLIENT_KEY_PATH: KEY,
      }),
    ).toBe(
      `TEMPORAL_TLS_CLIENT_CERT_PATH/_DATA (tls.client_cert_path/_data): cannot read ${path.join(dir, "missing.pem")} (ENOENT)`,
    );
    expect(refused({ TEMPORAL_ADDRESS: "a:1", TEMPORAL_TLS_CLIENT_CERT_PATH: CERT })).toMatch(
      /^TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH .* go together/,
    );
    expect(
      refused({ TEMPORAL_ADDRESS: "a:1", TEMPORAL_TLS_SERVER_CA_CERT_PATH: file("not-pem.txt", "hello") }),
    ).toMatch(/^TEMPORAL_TLS_SERVER_CA_CERT_PATH\/_DATA .* must be PEM/);
    expect(
      refused({
        TEMPORAL_ADDRESS: "a:1",
        TEMPORAL_TLS_CLIENT_CERT_PATH: CERT,
        TEMPORAL_TLS_CLIENT_CERT_DATA: pem("CERTIFICATE", "x"),
        TEMPORAL_TLS_CLIENT_KEY_PATH: KEY,
      }),
    ).toMatch(/Cannot specify both client_cert_path and client_cert_data/);
    expect(refused({ TEMPORAL_API_KEY: "k" })).toMatch(
      /^TEMPORAL_API_KEY and TEMPORAL_TLS_\* are settings of a cluster: set TEMPORAL_ADDRESS too/,
    );
    expect(refused({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: CA })).toMatch(/set TEMPORAL_ADDRESS too/);
    expect(refused({ TEMPORAL_CONFIG_FILE: file("bad.toml", "[profile.default\n") })).toMatch(
      /^Temporal's client configuration \(TEMPORAL_CONFIG_FILE=/,
    );
  });

  it("uses the configured TLS and key for the configured cluster only, never for the embedded dev server", () => {
    const settings = temporalSettings({ TEMPORAL_ADDRESS: "cluster:7233", TEMPORAL_API_KEY: "k" }, dir);
    expect(connectionSettings(settings, "cluster:7233")).toMatchObject({ address: "cluster:7233", apiKey: "k" });
    expect(connectionSettings(settings, "127.0.0.1:50001")).toEqual({ address: "127.0.0.1:50001" });
  });
});

describe("REWIND_PUBLIC_URL", () => {
  it("is an http(s) URL; whether it was set is kept, for workers that mint webhook URLs", () => {
    expect(loadConfig({ REWIND_PUBLIC_URL: "https://rewind.example.com/" }, dir).api).toMatchObject({
      publicUrl: "https://rewind.example.com",
      publicUrlSet: true,
    });
    expect(loadConfig({ REWIND_PORT: "9000" }, dir).api).toMatchObject({
      publicUrl: "http://127.0.0.1:9000",
      publicUrlSet: false,
    });
    for (const bad of [
      "rewind.example.com",
      "ftp://rewind.example.com",
      "https://user:pw@rewind.example.com",
      "https://rewind.example.com/?a=1",
    ]) {
      expect(() => loadConfig({ REWIND_PUBLIC_URL: bad }, dir), bad).toThrow(
        /^REWIND_PUBLIC_URL must be the http\(s\) URL harnesses reach the API at/,
      );
    }
  });
});
