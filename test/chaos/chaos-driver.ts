/**
 * The chaos driver: many runs against idempotent MCP servers that count effects per key, while
 * the worker is SIGKILLed at random moments, the Temporal dev server is restarted on its SQLite
 * file, and an MCP server goes down for longer than a retry interval. It then checks the
 * promises: every run completed with the right result, every effect happened once per key, no
 * at-most-once call was attempted twice, every event was delivered. Used by the bounded test in
 * `.ci/run` and by `npm run soak`.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client, Connection } from "@temporalio/client";
import { startApi, type RunningApi } from "../../src/cli/start-api.ts";
import { loadConfig } from "../../src/config.ts";
import { getFreePort, loadDevServerConfig, startDevServer, type DevServer } from "../../src/dev/index.ts";
import { silentLogger } from "../../src/shared/logger.ts";
import { startEventReceiver } from "../helpers/event-receiver.ts";
import { startMcpServer, type TestMcpServer, type TestToolDefinition } from "../helpers/mcp-test-server.ts";
import { IDEMPOTENCY_KEY, effectCounterTool } from "../helpers/mcp-test-tools.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { TEST_SECRET_KEY } from "../helpers/secret-key.ts";
import { spawnWorker, type WorkerProcess } from "../helpers/worker-process.ts";

export interface ChaosOptions {
  cliPath: string;
  runs: number;
  /** Worker SIGKILLs, spread over the runs' lifetime. */
  kills: number;
  /** Restart the Temporal server once, mid-run. */
  restartServer: boolean;
  /** Stop the MCP server for this long, once. */
  mcpOutageMs: number;
  /** Give up waiting for the runs after this long. */
  deadlineMs: number;
  log?: (line: string) => void;
}

export interface ChaosReport {
  runs: number;
  completed: number;
  wrongResults: string[];
  kills: number;
  serverRestarts: number;
  mcpOutages: number;
  effects: number;
  duplicateEffects: string[];
  atMostOnceCalls: number;
  atMostOnceRepeated: string[];
  eventsExpected: number;
  eventsDelivered: number;
  seconds: number;
}

const SCRIPT = `import { svc, sleep, ToolError } from "rewind:tools";
export default async function main(input: { n: number }) {
  let total = 0;
  for (let i = 0; i < 6; i++) {
    const r = await svc.record_effect({ label: "s" + i }) as { key: string };
    if (r.key) total += 1;
    await sleep(200 + (i * 37) % 300);
  }
  const parallel = await Promise.all(Array.from({ length: 8 }, (_, i) => svc.record_effect({ label: "p" + i })));
  // At most once: resent only when the call provably never left (the server was unreachable).
  let email = "unsent";
  for (let attempt = 0; attempt < 8 && email === "unsent"; attempt++) {
    try { await svc.send_email({ to: "n" + input.n, attempt }); email = "sent"; }
    catch (e) {
      const notSent = e instanceof ToolError && e.code === "toolFailed" && (e.details as { reason?: string } | undefined)?.reason === "unreachable";
      if (notSent) await sleep("1s");
      else email = e instanceof ToolError ? e.code : "error";
    }
  }
  return { n: input.n, sequential: total, parallel: parallel.length, email: email === "sent" || email === "outcomeUnknown" ? "ok" : email };
}`;

/** A tool that ignores the idempotency key, as an email sender would: it must never see a key twice. */
function sendEmailTool(seen: Map<string, number>): TestToolDefinition {
  return {
    name: "send_email",
    inputSchema: { type: "object" },
    async handler(_args, { meta }) {
      const key = String(meta[IDEMPOTENCY_KEY]);
      seen.set(key, (seen.get(key) ?? 0) + 1);
      return { content: [{ type: "text", text: "{\"sent\":true}" }] };
    },
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function retrying<T>(what: () => Promise<T>, attempts = 60): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await what();
    } catch (error) {
      if (i >= attempts) throw error;
      await pause(500);
    }
  }
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => undefined);
  const began = Date.now();
  const dir = await mkdtemp(path.join(tmpdir(), "rewind-chaos-"));
  const devConfig = await loadDevServerConfig(path.join(REPO_ROOT, "temporal-dev.yml"));
  const port = await getFreePort();
  const dbFile = path.join(dir, "temporal.sqlite");
  const startServer = () => startDevServer({ cliPath: options.cliPath, config: devConfig, port, uiPort: false, dbFile, logFile: path.join(dir, "temporal.log") });
  let server: DevServer = await startServer();
  const taskQueue = `chaos-${randomUUID()}`;
  const env = { TEMPORAL_ADDRESS: server.address, REWIND_TASK_QUEUE: taskQueue, REWIND_STATE_DIR: path.join(REPO_ROOT, ".rewind"), REWIND_SECRET_KEY: TEST_SECRET_KEY.toString("base64") };
  const config = loadConfig({ ...env, REWIND_PORT: "0", REWIND_API_KEYS: `chaos-key-${"x".repeat(16)}:chaos` }, REPO_ROOT);
  const auth = { authorization: `Bearer chaos-key-${"x".repeat(16)}` };
  const effects = effectCounterTool();
  const emails = new Map<string, number>();
  const tools = [effects.tool, sendEmailTool(emails)];
  let mcp: TestMcpServer = await startMcpServer({ tools });
  const mcpPort = mcp.port;
  const receiver = await startEventReceiver();
  let api: RunningApi | undefined;
  let worker: WorkerProcess | undefined;
  const report: ChaosReport = {
    runs: options.runs, completed: 0, wrongResults: [], kills: 0, serverRestarts: 0, mcpOutages: 0, effects: 0, duplicateEffects: [],
    atMostOnceCalls: 0, atMostOnceRepeated: [], eventsExpected: options.runs, eventsDelivered: 0, seconds: 0,
  };
  try {
    api = await startApi(config, server.address, undefined, silentLogger);
    const call = async (method: string, route: string, body?: unknown) => {
      const response = await fetch(api!.url + route, { method, headers: { "content-type": "application/json", ...auth }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await response.text();
      if (response.status >= 500) throw new Error(`${method} ${route} → ${response.status} ${text}`);
      return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
    };
    worker = await spawnWorker(env);
    const endpoint = await retrying(() => call("PUT", "/v1/events/endpoint", { url: receiver.url }));
    receiver.setSecret(String(endpoint.body["secret"]));
    const toolset = await retrying(() => call("POST", "/v1/toolsets", { mcpServers: { svc: { url: mcp.url } }, policies: { "svc.send_email": { onInterruption: "at_most_once", timeout: "10s" } } }));
    const ids: string[] = [];
    for (let n = 0; n < options.runs; n++) {
      const started = await retrying(() => call("POST", "/v1/runs", { toolset: toolset.body["id"], script: SCRIPT, input: { n } }));
      ids.push(String(started.body["id"]));
    }
    log(`started ${ids.length} runs`);

    const states = new Map<string, Record<string, unknown>>();
    const done = () => ids.every((id) => { const s = states.get(id)?.["status"]; return s === "completed" || s === "failed" || s === "cancelled"; });
    const poll = async () => {
      for (const id of ids) {
        if (states.get(id)?.["status"] === "completed") continue;
        const view = await call("GET", `/v1/runs/${id}`).catch(() => undefined);
        if (view?.status === 200) states.set(id, view.body);
      }
    };

    // The faults, spread over the first part of the runs' lifetime.
    const chaos = (async () => {
      for (let k = 0; k < options.kills && !done(); k++) {
        await pause(700 + Math.floor(Math.random() * 1300));
        await worker?.kill("SIGKILL");
        report.kills += 1;
        log(`kill ${report.kills}`);
        if (k === Math.floor(options.kills / 3) && options.restartServer) {
          await server.stop();
          server = await startServer();
          report.serverRestarts += 1;
          log("temporal server restarted on its SQLite file");
        }
        if (k === Math.floor((2 * options.kills) / 3) && options.mcpOutageMs > 0) {
          await mcp.close();
          await pause(options.mcpOutageMs);
          mcp = await startMcpServer({ tools, port: mcpPort });
          report.mcpOutages += 1;
          log(`MCP server back after ${options.mcpOutageMs} ms`);
        }
        worker = await retrying(() => spawnWorker(env), 10);
      }
    })();

    const deadline = began + options.deadlineMs;
    while (Date.now() < deadline) {
      await poll();
      if (done()) break;
      await pause(1000);
    }
    await chaos;
    await poll();

    for (const [index, id] of ids.entries()) {
      const state = states.get(id);
      if (state?.["status"] === "completed") report.completed += 1;
      const expected = { n: index, sequential: 6, parallel: 8, email: "ok" };
      if (JSON.stringify(state?.["result"]) !== JSON.stringify(expected)) report.wrongResults.push(`${id}: ${JSON.stringify(state?.["status"])} ${JSON.stringify(state?.["result"] ?? state?.["error"])}`);
    }
    const mine = [...effects.state.effects.entries()].filter(([key]) => ids.some((id) => key.startsWith(`${id}/`)));
    report.effects = mine.length;
    report.duplicateEffects = mine.filter(([, count]) => count !== 1).map(([key, count]) => `${key}×${count}`);
    const sends = [...emails.entries()].filter(([key]) => ids.some((id) => key.startsWith(`${id}/`)));
    report.atMostOnceCalls = sends.length;
    report.atMostOnceRepeated = sends.filter(([, count]) => count > 1).map(([key, count]) => `${key}×${count}`);
    for (let i = 0; i < 60; i++) {
      report.eventsDelivered = new Set(receiver.events.filter((e) => e.type === "run.completed" && ids.includes(e.runId)).map((e) => e.id)).size;
      if (report.eventsDelivered >= report.completed) break;
      await pause(500);
    }
    report.eventsExpected = report.completed;
  } finally {
    report.seconds = Math.round((Date.now() - began) / 1000);
    await worker?.kill("SIGKILL").catch(() => undefined);
    await api?.stop().catch(() => undefined);
    await mcp.close().catch(() => undefined);
    await receiver.close().catch(() => undefined);
    await server.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
  return report;
}

/** A client on the chaos server, for tests that look into histories. */
export async function chaosClient(address: string): Promise<Client> {
  return new Client({ connection: await Connection.connect({ address }) });
}
