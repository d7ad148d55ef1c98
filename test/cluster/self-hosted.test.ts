/**
 * docs/self-hosted.md, followed on the self-hosted cluster (scripts/temporal-cluster.sh): the
 * guide's commands are read from its code blocks and run as written — only /etc/rewind (a folder
 * per process here), /opt/rewind (this repository) and the ports are this machine's — with env
 * files holding exactly the settings the guide's files name. `rewind setup` creates a namespace
 * the plain server did not have; two workers and two API processes start without npx; a version
 * is made current; a run started through one API and read through the other calls an MCP tool,
 * keeps a large result in the payload store on S3 (a real S3-compatible server), has its worker
 * stopped while a call is in flight (the call ends there, once), waits for a webhook while a new
 * version becomes current (it stays pinned to its own), and completes. The supervisors' examples
 * (systemd unit, Kubernetes Deployment and probes) must start the same command and probe what
 * answers.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { Client } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { connectClient } from "../../src/temporal/index.ts";
import { codeBlocks, section } from "../docs/readme-blocks.ts";
import { rewindBinDir, runShell, spawnShell, type ShellProcess } from "../docs/shell.ts";
import { getFreePort } from "../helpers/free-port.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool, slowTool } from "../helpers/mcp-test-tools.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { S3_TEST_CREDENTIALS, startS3Server, type S3Server } from "../helpers/s3-server.ts";
import { waitFor } from "../helpers/wait-for.ts";

const GUIDE = await readFile(path.join(REPO_ROOT, "docs/self-hosted.md"), "utf8");
const NAMESPACE = `story-${randomUUID().slice(0, 8)}`;
const API_KEY = `rk_${randomBytes(16).toString("hex")}`;
const BUCKET = "rewind-payloads";
const BUILD_A = "2026-12-01";
const BUILD_B = "2026-12-02";

/** The guide's block of a section whose first line names the file (`# /etc/rewind/common.env`). */
function envFileBlock(name: string): string {
  const block = codeBlocks(GUIDE, "sh").find((b) => b.startsWith(`# /etc/rewind/${name}\n`));
  if (!block) throw new Error(`docs/self-hosted.md has no block for /etc/rewind/${name}`);
  return block;
}
/** KEY=value lines of an env block, in order. */
function envEntries(block: string): [string, string][] {
  return block
    .split("\n")
    .filter((line) => /^[A-Z_0-9]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1).replace(/\s+#.*$/, "")]);
}
/** The sh blocks of the guide's `## heading` section. */
const commands = (heading: string) => codeBlocks(section(GUIDE, heading), "sh");
/** What the exec'd command of a start block is (`cd /opt/rewind && exec <this>`). */
const execOf = (block: string) => /&& exec (.+)$/m.exec(block)?.[1] ?? "";

let s3: S3Server;
let mcp: TestMcpServer;
let binDir: string;
let work: string;
let client: Client;
const slow = slowTool({ delayMs: 3_000 });
const shells: ShellProcess[] = [];

/** Settings the test gives where the guide's values name other machines; the rest are the guide's. */
let local: Record<string, string>;

/** The environment every command runs in: secrets and S3 credentials, as a supervisor hands them over. */
function shellEnv(): Record<string, string> {
  return {
    PATH: [binDir, path.dirname(inject("temporalCliPath")), process.env["PATH"] ?? ""].join(":"),
    HOME: process.env["HOME"] ?? tmpdir(),
    AWS_ACCESS_KEY_ID: S3_TEST_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3_TEST_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_S3: s3.endpoint,
  };
}

/** An /etc/rewind of its own for one process: the guide's files with this machine's values. */
async function etcFor(name: string, files: Record<string, Record<string, string>>): Promise<string> {
  const dir = path.join(work, name);
  await mkdir(dir, { recursive: true });
  for (const [file, overrides] of Object.entries(files)) {
    const entries = envEntries(envFileBlock(file)).map(([key, value]) => [key, overrides[key] ?? local[key] ?? value]);
    await writeFile(path.join(dir, file), entries.map(([key, value]) => `${key}=${value}\n`).join(""));
  }
  return dir;
}

/** A guide's command, with /etc/rewind and /opt/rewind this machine's. */
const asHere = (block: string, etc: string) =>
  block.replaceAll("/etc/rewind/", `${etc}/`).replaceAll("/opt/rewind", REPO_ROOT);

async function startWorker(name: string, buildId: string): Promise<ShellProcess & { etc: string }> {
  const etc = await etcFor(name, {
    "common.env": {},
    "worker.env": { REWIND_BUILD_ID: buildId, REWIND_METRICS_PORT: String(await getFreePort()) },
  });
  const worker = spawnShell(asHere(commands("7. Start N workers and M API processes")[0] ?? "", etc), {
    cwd: work,
    env: shellEnv(),
  });
  shells.push(worker);
  await worker.waitFor(
    new RegExp(
      `worker started taskQueue=rewind deploymentVersion=rewind\\.${buildId.replace(/\./g, "\\.")} versioning=pinned`,
    ),
    90_000,
  );
  return Object.assign(worker, { etc });
}

async function startApi(name: string, port: number): Promise<ShellProcess & { etc: string; url: string }> {
  const etc = await etcFor(name, {
    "common.env": {},
    "api.env": { REWIND_PORT: String(port), REWIND_METRICS_PORT: String(await getFreePort()) },
  });
  const api = spawnShell(asHere(commands("7. Start N workers and M API processes")[1] ?? "", etc), {
    cwd: work,
    env: shellEnv(),
  });
  shells.push(api);
  await api.waitFor(new RegExp(`Rewind API http://127\\.0\\.0\\.1:${port}`), 90_000);
  return Object.assign(api, { etc, url: `http://127.0.0.1:${port}` });
}

/** The guide's set-current-version command with a worker's files, until the server takes it. */
async function makeCurrent(etc: string): Promise<void> {
  const command = asHere(commands("7. Start N workers and M API processes")[2] ?? "", etc);
  expect(command).toContain("temporal worker deployment set-current-version");
  await waitFor(
    `the server to make the version of ${etc} current`,
    async () => {
      const result = await runShell(command, { cwd: work, env: shellEnv(), timeoutMs: 30_000 });
      if (result.code !== 0) throw new Error(result.output);
      return true;
    },
    { timeoutMs: 60_000, intervalMs: 1_000, retryErrors: true },
  );
}

async function api(base: string, method: string, route: string, body?: unknown) {
  const response = await fetch(base + route, {
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

/** The versioning a run's workflow carries, as `temporal workflow describe` shows it. */
async function buildIdOf(runId: string): Promise<string | undefined> {
  const { raw } = await client.workflow.getHandle(runId).describe();
  return raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId ?? undefined;
}

beforeAll(async () => {
  [s3, mcp, binDir, work] = await Promise.all([
    startS3Server(),
    startMcpServer({
      tools: [
        echoTool(),
        slow.tool,
        {
          name: "big",
          inputSchema: { type: "object" },
          // Over the 256 KiB threshold: kept in the payload store, history holds a reference.
          handler: async () => ({ content: [{ type: "text", text: JSON.stringify({ data: "x".repeat(400_000) }) }] }),
        },
      ],
    }),
    rewindBinDir(),
    mkdtemp(path.join(tmpdir(), "rewind-self-hosted-")),
  ]);
  await s3.createBucket(BUCKET);
  client = new Client({ connection: await connectClient({ address: inject("clusterAddress") }), namespace: NAMESPACE });
  local = {
    TEMPORAL_ADDRESS: inject("clusterAddress"),
    TEMPORAL_NAMESPACE: NAMESPACE,
    REWIND_SECRET_KEY: randomBytes(32).toString("base64"),
    REWIND_API_KEYS: `${API_KEY}:acme`,
    REWIND_TRUSTED_TARGETS: "127.0.0.1", // the MCP server is an internal one, on loopback here
    REWIND_PAYLOAD_STORE: `s3://${BUCKET}/prod`,
    AWS_REGION: "us-east-1",
    REWIND_STATE_DIR: path.join(REPO_ROOT, ".rewind"), // the workflow bundle's cache
    // Tests listen on loopback only.
    REWIND_HOST: "127.0.0.1",
    REWIND_METRICS_ADDRESS: "127.0.0.1",
  };
});

afterAll(async () => {
  await Promise.all(shells.map((shell) => shell.stop("SIGKILL")));
  await client?.connection.close();
  await mcp?.close();
  await s3?.stop();
  await Promise.all([binDir, work].filter(Boolean).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe("docs/self-hosted.md on the self-hosted cluster", () => {
  it("sets up a namespace the plain server did not have", async () => {
    const etc = await etcFor("setup", { "common.env": {} });
    const [block = ""] = commands("6. Set up the namespace");
    const setup = await runShell(asHere(block, etc), { cwd: work, env: shellEnv(), timeoutMs: 120_000 });
    expect(setup.code, setup.output).toBe(0);
    const [printed = ""] = codeBlocks(section(GUIDE, "6. Set up the namespace"), "text");
    for (const line of printed.trimEnd().split("\n"))
      expect(setup.output).toContain(
        line.replace("temporal.internal:7233", inject("clusterAddress")).replaceAll('"rewind"', `"${NAMESPACE}"`),
      );
  });

  it("runs two workers and two API processes as the guide starts them; a run outlives its worker and a new version", async () => {
    const [apiPort1, apiPort2] = [await getFreePort(), await getFreePort()];
    local["REWIND_PUBLIC_URL"] = `http://127.0.0.1:${apiPort1}`;
    const [a1, a2] = await Promise.all([startWorker("worker-a1", BUILD_A), startWorker("worker-a2", BUILD_A)]);
    await makeCurrent(a1.etc);
    const [api1, api2] = await Promise.all([startApi("api-1", apiPort1), startApi("api-2", apiPort2)]);

    // The readiness check, and what the supervisors' probes ask.
    const [readiness = ""] = commands("7. Start N workers and M API processes").slice(3);
    for (const port of [apiPort1, apiPort2]) {
      const ready = await runShell(readiness.replace("127.0.0.1:8787", `127.0.0.1:${port}`), {
        cwd: work,
        env: shellEnv(),
      });
      expect(ready.code, ready.output).toBe(0);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    }
    const workerMetrics = (await readFile(path.join(a1.etc, "worker.env"), "utf8")).match(/REWIND_METRICS_PORT=(\d+)/);
    expect((await fetch(`http://127.0.0.1:${workerMetrics?.[1]}/metrics`)).status, "the worker's liveness probe").toBe(
      200,
    );

    const toolset = await api(api1.url, "POST", "/v1/toolsets", { mcpServers: { svc: { url: mcp.url } } });
    expect(toolset.status, JSON.stringify(toolset.body)).toBe(201);
    const script = `import { svc, webhook, waitForSignal } from "rewind:tools";
export default async function main() {
  const { url } = await webhook("go");
  await svc.echo({ message: url });
  const slow = (await svc.slow({})) as { slept: number };
  const big = (await svc.big({})) as { data: string };
  const go = await waitForSignal<{ by: string }>("go");
  return { slept: slow.slept, big: big.data.length, by: go.by };
}`;
    const started = await api(api1.url, "POST", "/v1/runs", { toolset: toolset.body["id"], script });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const runId = String(started.body["id"]);

    // The worker running the slow call is told to stop while the call is at the server: it lets
    // the call end (REWIND_SHUTDOWN_GRACE) and exits 0; the call reached the server once.
    await waitFor("the slow call at the MCP server", () => slow.state.started === 1, { timeoutMs: 60_000 });
    const holder = await waitFor(
      "the slow call's worker in the run's pending activities",
      async () => {
        const { raw } = await client.workflow.getHandle(runId).describe();
        // The script is sequential: the one call pending is the slow one.
        const identity = raw.pendingActivities?.find((a) => a.lastWorkerIdentity)?.lastWorkerIdentity;
        return [a1, a2].find((w) => identity?.startsWith(`${w.child.pid}@`));
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    const stopped = await holder.stop("SIGTERM");
    expect(stopped.code, stopped.output).toBe(0);
    expect(stopped.output).toContain("worker drained and stopped");
    expect({ started: slow.state.started, completed: slow.state.completed, cancelled: slow.state.cancelled }).toEqual({
      started: 1,
      completed: 1,
      cancelled: 0,
    });

    // The run waits for its webhook; the other API process sees it, with its Temporal UI link.
    const waiting = await waitFor("the run to wait for its webhook", () => api(api2.url, "GET", `/v1/runs/${runId}`), {
      until: (view) => mcp.calls.some((c) => c.name === "big") && view.body["status"] === "running",
      timeoutMs: 60_000,
    });
    const uiUrl = envEntries(envFileBlock("common.env")).find(([key]) => key === "TEMPORAL_UI_URL")?.[1];
    expect(waiting.body["temporalUrl"]).toBe(`${uiUrl}/namespaces/${NAMESPACE}/workflows/${runId}`);

    // A new version: its worker starts beside the old one and becomes current; new runs go to it.
    const b1 = await startWorker("worker-b1", BUILD_B);
    await makeCurrent(b1.etc);
    const second = await api(api2.url, "POST", "/v1/runs", {
      toolset: toolset.body["id"],
      script:
        'import { svc } from "rewind:tools";\nexport default async () => (await svc.echo({ message: "new" })) !== undefined;',
    });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    const secondDone = await waitFor(
      "the new version's run to end",
      () => api(api2.url, "GET", `/v1/runs/${String(second.body["id"])}`),
      {
        until: (view) => view.body["status"] !== "running",
        timeoutMs: 60_000,
      },
    );
    expect(secondDone.body).toMatchObject({ status: "completed", result: true });
    expect(await buildIdOf(String(second.body["id"]))).toBe(BUILD_B);

    // The first run, pinned to its version, finishes on the old version's remaining worker.
    const hook = mcp.calls.find((c) => c.name === "echo" && String(c.arguments["message"]).includes(runId));
    const posted = await fetch(String(hook?.arguments["message"]), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ by: "ops" }),
    });
    expect(posted.status).toBe(202);
    const done = await waitFor("the first run to end", () => api(api1.url, "GET", `/v1/runs/${runId}`), {
      until: (view) => view.body["status"] !== "running" && view.body["status"] !== "parked",
      timeoutMs: 60_000,
    });
    expect(done.body).toMatchObject({ status: "completed", result: { slept: 3_000, big: 400_000, by: "ops" } });
    expect(await buildIdOf(runId)).toBe(BUILD_A);

    // The large result went to S3.
    const listed = await s3.client().send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: "prod/" }));
    expect(listed.KeyCount ?? 0).toBeGreaterThan(0);

    for (const process of [a1, a2, b1, api1, api2].filter((p) => p !== holder)) {
      const exit = await process.stop("SIGTERM");
      expect(exit.code, exit.output).toBe(0);
    }
  });

  it("gives its supervisors the command it starts and probes what answers", () => {
    const [workerStart = ""] = commands("7. Start N workers and M API processes");
    const command = execOf(workerStart);
    expect(command).toMatch(/^node_modules\/\.bin\/node .*src\/cli\/main\.ts worker$/);
    const unit = codeBlocks(section(GUIDE, "8. Supervisors"), "ini")[0] ?? "";
    expect(unit).toContain(`ExecStart=/opt/rewind/${command}\n`);
    expect(unit).toContain("WorkingDirectory=/opt/rewind\n");
    const workerEnv = Object.fromEntries(envEntries(envFileBlock("worker.env")));
    const graceS = Number(/^(\d+)s$/.exec(workerEnv["REWIND_SHUTDOWN_GRACE"] ?? "")?.[1]);
    expect(Number(/TimeoutStopSec=(\d+)/.exec(unit)?.[1])).toBeGreaterThan(graceS);

    const [deployment, probes] = codeBlocks(section(GUIDE, "8. Supervisors"), "yaml").map(
      (block) => parseYaml(block) as Record<string, unknown>,
    );
    type Container = {
      command: string[];
      workingDir: string;
      env: { name: string; value: string }[];
      livenessProbe: { httpGet: { path: string; port: string } };
      ports: { name: string; containerPort: number }[];
    };
    const pod = (
      deployment as { spec: { template: { spec: { terminationGracePeriodSeconds: number; containers: Container[] } } } }
    ).spec.template.spec;
    const container = pod.containers[0];
    expect(container?.command.join(" ")).toBe(command);
    expect(container?.workingDir).toBe("/opt/rewind");
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(graceS);
    expect(Object.fromEntries(container?.env.map((e) => [e.name, e.value]) ?? [])).toEqual(workerEnv);
    expect(container?.livenessProbe.httpGet.path).toBe("/metrics");
    expect(container?.ports.find((p) => p.name === container.livenessProbe.httpGet.port)?.containerPort).toBe(
      Number(workerEnv["REWIND_METRICS_PORT"]),
    );
    const apiPort = Number(Object.fromEntries(envEntries(envFileBlock("api.env")))["REWIND_PORT"]);
    expect(probes).toEqual({
      livenessProbe: { httpGet: { path: "/healthz", port: apiPort }, periodSeconds: 10 },
      readinessProbe: { httpGet: { path: "/readyz", port: apiPort }, periodSeconds: 5, failureThreshold: 2 },
    });
  });

  it("shows the configuration the cluster runs on", async () => {
    const config = await readFile(path.join(REPO_ROOT, "scripts/temporal-cluster.yaml"), "utf8");
    const [excerpt = ""] = codeBlocks(section(GUIDE, "3. The server's configuration and its services"), "yaml");
    expect(config).toContain(excerpt);
    expect(excerpt).toContain("visibilityStore: postgres-visibility");
  });
});
