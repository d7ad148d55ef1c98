/**
 * docs/deploy.md, followed to the letter against a cluster behind TLS: a Temporal dev server with
 * none of Rewind's search attributes plays the cluster, reachable only through a TLS-terminating
 * proxy that requires a client certificate (certificates made here with node:crypto). `rewind setup`,
 * the API and two workers run as separate processes configured only by the guide's settings, and
 * the harness's host-tool worker (the SDK) reads the same; a run calls a host tool and an MCP tool,
 * sleeps, waits for a webhook minted by one worker, is finished by the other after the first
 * stops, and completes. A worker without the client certificate, and an API
 * on a namespace setup never saw, refuse to start with one sentence.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connectClient } from "../../src/temporal/index.ts";
import { temporalSettings } from "../../src/config.ts";
import {
  getFreePort,
  loadDevServerConfig,
  startDevServer,
  startOnFreePort,
  type DevServer,
} from "../../src/dev/index.ts";
import { createHostToolWorker } from "../../src/sdk/index.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { runRewind, spawnRewind, type RewindProcess } from "../helpers/rewind-process.ts";
import { createTestCertificates, type TestCertificates } from "../helpers/test-certificates.ts";
import { startTlsProxy, type TlsProxy } from "../helpers/tls-proxy.ts";
import { waitFor } from "../helpers/wait-for.ts";

const dir = mkdtempSync(path.join(tmpdir(), "rewind-deploy-"));
const API_KEY = `rk_${randomBytes(16).toString("hex")}`;
const NAMESPACE = "rewind-deploy";
const SECRET_KEY = randomBytes(32).toString("base64");
let cluster: DevServer;
let proxy: TlsProxy;
let certs: TestCertificates;
let mcp: TestMcpServer;
let apiPort: number;
const processes: RewindProcess[] = [];

/** The settings docs/deploy.md gives every process (its table), nothing else. */
function guideSettings(): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: proxy.address,
    TEMPORAL_NAMESPACE: NAMESPACE,
    TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: certs.clientKey,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCert,
    TEMPORAL_TLS_SERVER_NAME: "temporal.internal",
    REWIND_SECRET_KEY: SECRET_KEY,
    REWIND_API_KEYS: `${API_KEY}:acme`,
    REWIND_TRUSTED_TARGETS: "127.0.0.1", // the MCP server is an internal one, on loopback here
    REWIND_PUBLIC_URL: `http://127.0.0.1:${apiPort}`,
    REWIND_PAYLOAD_STORE: `file:${path.join(dir, "payloads")}`, // shared by every process
    REWIND_STATE_DIR: path.join(REPO_ROOT, ".rewind"), // local: the worker's workflow-bundle cache
  };
}
function start(args: string[], env: Record<string, string>): RewindProcess {
  const child = spawnRewind(args, env);
  processes.push(child);
  return child;
}

async function api(
  method: string,
  route: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${apiPort}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${API_KEY}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

beforeAll(async () => {
  certs = createTestCertificates({ dir, serverNames: ["temporal.internal", "localhost"] });
  // A stock cluster: the repository's dev-server settings without Rewind's search attributes.
  const config = { ...(await loadDevServerConfig(path.join(REPO_ROOT, "temporal-dev.yml"))), searchAttributes: {} };
  cluster = await startOnFreePort((port) =>
    startDevServer({ cliPath: inject("temporalCliPath"), config, port, uiPort: false, dbFile: undefined }),
  );
  const [host = "127.0.0.1", port = "0"] = cluster.address.split(":");
  proxy = await startTlsProxy({
    cert: certs.serverCert,
    key: certs.serverKey,
    clientCa: certs.caCert,
    target: { host, port: Number(port) },
  });
  mcp = await startMcpServer({ tools: [echoTool()] });
  apiPort = await getFreePort();
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop("SIGKILL")));
  await mcp?.close();
  await proxy?.close();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("a deployment on a TLS cluster, as docs/deploy.md describes it", () => {
  it("refuses a worker and setup without the client certificate, a worker expecting another server name, and an API on a namespace without Rewind's search attributes", async () => {
    const {
      TEMPORAL_TLS_CLIENT_CERT_PATH: _cert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: _key,
      ...noClientCert
    } = guideSettings();
    const refusedBefore = proxy.stats.refused;
    const [worker, wrongName, setup, apiOnDefault] = await Promise.all([
      runRewind(["worker"], noClientCert),
      runRewind(["worker"], { ...guideSettings(), TEMPORAL_TLS_SERVER_NAME: "wrong.internal" }),
      runRewind(["setup"], noClientCert),
      // `default` exists on the cluster but setup never ran there: no search attributes.
      runRewind(["api"], { ...guideSettings(), TEMPORAL_NAMESPACE: "default", REWIND_PORT: "0" }),
    ]);
    // grpc-js may add a DeprecationWarning about an IP address as TLS server name first: the sentence is the last line.
    const lastLine = (output: string) => output.trimEnd().split("\n").at(-1) ?? "";
    expect(worker.code).toBe(1);
    expect(lastLine(worker.output)).toMatch(
      new RegExp(
        `^rewind: cannot connect to Temporal at ${proxy.address.replace(/\./g, "\\.")} \\(TLS, no client certificate, own CA, server name temporal\\.internal\\): .+; check TEMPORAL_ADDRESS and TEMPORAL_TLS_\\*: a server that requires a client certificate needs TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH$`,
      ),
    );
    expect(wrongName.code).toBe(1);
    expect(lastLine(wrongName.output)).toMatch(
      /\(TLS, client certificate, own CA, server name wrong\.internal\): InvalidCertificate\(NotValidForNameContext \{ expected: DnsName\("wrong\.internal"\), .*; check TEMPORAL_ADDRESS and the TEMPORAL_TLS_\* \/ TEMPORAL_API_KEY settings$/,
    );
    // The client connection (API, setup) only learns that the deadline passed; the native client adds
    // what the TLS layer saw, as far as it got (the server's CertificateRequired alert, or the
    // connection it closed after sending it: which one depends on timing, so it is not pinned here).
    expect(setup.code).toBe(1);
    expect(lastLine(setup.output)).toMatch(
      /\(TLS, no client certificate, own CA, server name temporal\.internal\): Failed to connect before the deadline \(.+\); check TEMPORAL_ADDRESS and TEMPORAL_TLS_\*: a server that requires a client certificate needs TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH$/,
    );
    expect(proxy.stats.refused, "the proxy refused the handshake (no client certificate)").toBeGreaterThan(
      refusedBefore,
    );
    expect(apiOnDefault.code).toBe(1);
    expect(lastLine(apiOnDefault.output)).toMatch(
      new RegExp(
        `^rewind: Temporal namespace "default" at ${proxy.address.replace(/\./g, "\\.")} lacks Rewind's search attributes RewindToolset \\(Keyword\\), .*: run \`rewind setup\` \\(with the same TEMPORAL_\\* settings\\) to register them\\.$`,
      ),
    );
  });

  it("runs setup, the API and two workers through the proxy; a run survives its worker leaving", async () => {
    const setup = await runRewind(["setup"], guideSettings());
    expect(setup.output).toContain(`namespace "${NAMESPACE}": created (retention 30 days)`);
    expect(setup.output).toContain("ready: `rewind api` and `rewind worker` can start with these settings");
    expect(setup.code).toBe(0);

    const acceptedBefore = proxy.stats.accepted;
    const apiProcess = start(["api"], { ...guideSettings(), REWIND_PORT: String(apiPort) });
    const first = start(["worker"], guideSettings());
    await Promise.all([
      apiProcess.waitFor(/Rewind API http:\/\/127\.0\.0\.1:\d+/, 45_000),
      first.waitFor(/worker started/, 45_000),
    ]);
    expect(proxy.stats.accepted, "every process reached Temporal through the proxy").toBeGreaterThan(acceptedBefore);

    // The harness serves a host tool through the same proxy, with the SDK reading the same settings.
    const host = await createHostToolWorker({
      ...temporalSettings(guideSettings(), dir),
      taskQueue: "deploy-harness",
      tools: { "harness.whoami": async () => ({ harness: "deploy-test" }) },
    });
    const hostRunning = host.run();
    const toolset = await api("POST", "/v1/toolsets", {
      mcpServers: { tickets: { url: mcp.url } },
      hostTools: {
        harness: {
          taskQueue: "deploy-harness",
          tools: {
            whoami: {
              inputSchema: { type: "object" },
              outputSchema: { type: "object", properties: { harness: { type: "string" } }, required: ["harness"] },
            },
          },
        },
      },
    });
    expect(toolset.status, JSON.stringify(toolset.body)).toBe(201);
    const script = `import { harness, tickets, webhook, waitForSignal, sleep } from "rewind:tools";
export default async function main() {
  const { url } = await webhook("approved");
  const me = await harness.whoami({});
  await tickets.echo({ message: url });
  await sleep("1s");
  const approval = await waitForSignal<{ by: string }>("approved");
  await tickets.echo({ message: "approved by " + approval.by });
  return { approvedBy: approval.by, harness: me.harness };
}`;
    const started = await api("POST", "/v1/runs", { toolset: toolset.body["id"], script });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const runId = String(started.body["id"]);

    // The first call went out through the only worker; its URL names the API, signed with the shared key.
    const hookUrl = await waitFor(
      "the first call at the MCP server",
      () => {
        const call = mcp.calls.find((c) => String(c.arguments["message"]).includes(`/v1/hooks/${runId}/approved`));
        return call ? String(call.arguments["message"]) : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(hookUrl.startsWith(`http://127.0.0.1:${apiPort}/v1/hooks/${runId}/approved?token=`)).toBe(true);

    // A second worker joins; the first leaves while the run sleeps and waits.
    const second = start(["worker"], guideSettings());
    await second.waitFor(/worker started/, 45_000);
    // The first worker leaves while the run is still going: it waits for the signal only the test sends.
    const going = await api("GET", `/v1/runs/${runId}`);
    expect(going.body["status"], JSON.stringify(going.body)).toBe("running");
    await first.stop("SIGTERM");
    expect((await first.exited).code).toBe(0);

    const posted = await fetch(hookUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ by: "ops" }),
    });
    expect(posted.status).toBe(202);
    const done = await waitFor("the run to end", async () => (await api("GET", `/v1/runs/${runId}`)).body, {
      until: (body) => body["status"] !== "running" && body["status"] !== "parked",
    });
    expect(done).toMatchObject({ status: "completed", result: { approvedBy: "ops", harness: "deploy-test" } });
    await host.shutdown();
    await hostRunning;
    expect(mcp.calls.filter((c) => c.name === "echo").map((c) => c.arguments["message"])).toEqual([
      hookUrl,
      "approved by ops",
    ]);

    // Each worker ran one of the calls: the history names both, by process id.
    const operator = await connectClient({ address: cluster.address });
    try {
      const history = await operator.workflowService.getWorkflowExecutionHistory({
        namespace: NAMESPACE,
        execution: { workflowId: runId },
      });
      const events = history.history?.events ?? [];
      const scheduled = new Map(
        events.flatMap((e) =>
          e.activityTaskScheduledEventAttributes
            ? [[Number(e.eventId), e.activityTaskScheduledEventAttributes.taskQueue?.name]]
            : [],
        ),
      );
      const mcpCallers = events.flatMap((e) => {
        const started = e.activityTaskStartedEventAttributes;
        return started && scheduled.get(Number(started.scheduledEventId)) !== "deploy-harness"
          ? [String(started.identity).split("@")[0]]
          : [];
      });
      expect(mcpCallers).toEqual([String(first.child.pid), String(second.child.pid)]);
    } finally {
      await operator.close();
    }
  });
});
