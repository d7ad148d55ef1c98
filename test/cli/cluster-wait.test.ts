/**
 * `rewind worker` and `rewind api` started before their cluster (a restart, a compose file that
 * starts everything at once): on a loopback port where no Temporal listens yet they say, one line
 * per attempt, what they wait for and why, and do not exit; the API answers `GET /readyz` with
 * 503 meanwhile. Once a dev server starts on that port the worker serves a run end to end and
 * `/readyz` turns 200. `rewind setup` and `rewind payloads prune` (a deploy step, a cron job) wait
 * alike and then do their work. REWIND_CONNECT_TIMEOUT makes them all give up, naming what they
 * waited for; a refused TLS handshake still fails at once (a missing namespace too:
 * namespace-setup.test.ts).
 */
import { randomUUID } from "node:crypto";
import net from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WAITING_FOR_TEMPORAL_MESSAGE } from "../../src/api/waiting-app.ts";
import { getFreePort, loadDevServerConfig, startDevServer, type DevServer } from "../../src/dev/index.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { runRewind, spawnRewind, type RewindProcess } from "../helpers/rewind-process.ts";
import { TEST_SECRET_KEY } from "../helpers/secret-key.ts";
import { waitFor } from "../helpers/wait-for.ts";

let dir: string;
let server: DevServer | undefined;
const processes: RewindProcess[] = [];

const settings = (address: string, extra: Record<string, string> = {}) => ({
  TEMPORAL_ADDRESS: address,
  REWIND_SECRET_KEY: TEST_SECRET_KEY.toString("base64"),
  REWIND_STATE_DIR: path.join(REPO_ROOT, ".rewind"),
  REWIND_TASK_QUEUE: `cluster-wait-${randomUUID()}`,
  REWIND_PUBLIC_URL: "http://127.0.0.1:1",
  ...extra,
});
function start(args: string[], env: Record<string, string>): RewindProcess {
  const child = spawnRewind(args, env);
  processes.push(child);
  return child;
}
const running = (p: RewindProcess) => p.child.exitCode === null && p.child.signalCode === null;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rewind-cluster-wait-"));
});
afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop("SIGKILL")));
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("started before the cluster", () => {
  it("the worker and the API wait, /readyz says 503, and both serve once a dev server starts on the port", async () => {
    const port = await getFreePort();
    const address = `127.0.0.1:${port}`;
    const apiPort = await getFreePort();
    const api = `http://127.0.0.1:${apiPort}`;
    const env = settings(address, { REWIND_PUBLIC_URL: api });
    const worker = start(["worker"], env);
    const apiProcess = start(["api"], { ...env, REWIND_PORT: String(apiPort) });
    const setup = start(["setup"], env);
    const prune = start(["payloads", "prune", "--dry-run"], env);
    const waiting = (who: string, attempt: number) =>
      new RegExp(
        `${who} is waiting for Temporal at ${address} \\(plaintext \\(no TLS\\)\\): nothing answers \\(connection refused\\); attempt ${attempt}, next in `,
      );
    await Promise.all([
      worker.waitFor(waiting("the worker", 2), 45_000),
      apiProcess.waitFor(waiting("the API", 2), 45_000),
      setup.waitFor(waiting("rewind setup", 2), 45_000),
      prune.waitFor(waiting("rewind payloads prune", 2), 45_000),
      apiProcess.waitFor(new RegExp(`the API listens at ${api}; GET /readyz answers 503 until Temporal answers`)),
    ]);
    expect([worker, apiProcess, setup, prune].map(running), "all four still waiting, none exited").toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(worker.output()).not.toContain("check TEMPORAL_ADDRESS");

    const notReady = await fetch(`${api}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({ error: { code: "unavailable", message: WAITING_FOR_TEMPORAL_MESSAGE } });
    expect((await fetch(`${api}/healthz`)).status, "alive while it waits").toBe(200);
    expect((await fetch(`${api}/v1/runs`)).status, "the other routes wait too").toBe(503);

    // The cluster comes up on that port: its `default` namespace has Rewind's search attributes
    // (temporal-dev.yml), so no `rewind setup` is needed.
    const config = await loadDevServerConfig(path.join(REPO_ROOT, "temporal-dev.yml"));
    server = await startDevServer({
      cliPath: inject("temporalCliPath"),
      config,
      port,
      uiPort: false,
      dbFile: path.join(dir, "temporal.sqlite"),
    });
    // The pauses reach 10 s, and a worker's first start builds its workflow bundle.
    await Promise.all([
      worker.waitFor(/worker started/, 60_000),
      apiProcess.waitFor(new RegExp(`Rewind API ${api}`), 60_000),
    ]);
    expect(worker.output()).toMatch(
      new RegExp(`the worker: Temporal at ${address} \\(plaintext \\(no TLS\\)\\) answers after`),
    );
    // The one-shot commands did their work once it answered.
    expect(await setup.exited, setup.output()).toEqual({ code: 0, signal: null });
    expect(setup.output()).toMatch(/rewind setup: Temporal at .* answers after/);
    expect(setup.output()).toContain("ready: `rewind api` and `rewind worker` can start with these settings");
    expect(await prune.exited, prune.output()).toEqual({ code: 0, signal: null });
    expect(prune.output()).toMatch(/would delete \d+ payloads? /);
    await waitFor("GET /readyz to answer 200", async () => (await fetch(`${api}/readyz`)).status, {
      until: (status) => status === 200,
      timeoutMs: 15_000,
    });

    const started = await fetch(`${api}/v1/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ script: "export default async (i: { n: number }) => i.n * 2", input: { n: 21 } }),
    });
    const body = (await started.json()) as { id: string };
    expect(started.status, JSON.stringify(body)).toBe(201);
    const done = await waitFor(
      `run ${body.id} to end on the worker that waited`,
      async () => (await (await fetch(`${api}/v1/runs/${body.id}`)).json()) as { status: string },
      { until: (run) => run.status !== "running", timeoutMs: 30_000 },
    );
    expect(done).toMatchObject({ status: "completed", result: 42 });

    await worker.stop("SIGTERM");
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    expect(worker.output()).toContain("worker drained and stopped");
    await apiProcess.stop("SIGTERM");
    expect(await apiProcess.exited).toEqual({ code: 0, signal: null });
  });

  it("REWIND_CONNECT_TIMEOUT makes the worker, the API and the one-shot commands give up, naming what they waited for", async () => {
    const address = `127.0.0.1:${await getFreePort()}`;
    const env = settings(address, { REWIND_CONNECT_TIMEOUT: "2s", REWIND_PORT: "0" });
    const began = Date.now();
    const [worker, api, setup, prune] = await Promise.all([
      runRewind(["worker"], env, 30_000),
      runRewind(["api"], env, 30_000),
      runRewind(["setup"], env, 30_000),
      runRewind(["payloads", "prune"], env, 30_000),
    ]);
    expect(Date.now() - began, "gave up at the bound, not later").toBeLessThan(20_000);
    for (const [who, result] of [
      ["the worker", worker],
      ["the API", api],
      ["rewind setup", setup],
      ["rewind payloads prune", prune],
    ] as const) {
      expect(result.code, result.output).toBe(1);
      expect(result.output.trimEnd().split("\n").at(-1)).toMatch(
        new RegExp(
          `^rewind: ${who} gave up waiting for Temporal at ${address} \\(plaintext \\(no TLS\\)\\) after [\\d.]+ s \\(REWIND_CONNECT_TIMEOUT=2 s\\): nothing answers \\(connection refused\\)$`,
        ),
      );
    }
  });

  it("a port that accepts connections and never speaks (a proxy before its backend is up) is waited on, not a refusal", async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const address = `127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
      const env = settings(address, { REWIND_CONNECT_TIMEOUT: "2s", REWIND_PORT: "0" });
      const [worker, api] = await Promise.all([runRewind(["worker"], env, 90_000), runRewind(["api"], env, 90_000)]);
      for (const [who, result] of [
        ["the worker", worker],
        ["the API", api],
      ] as const) {
        expect(result.code, result.output).toBe(1);
        expect(result.output).not.toContain("cannot connect to Temporal");
        expect(result.output.trimEnd().split("\n").at(-1)).toMatch(
          new RegExp(
            `^rewind: ${who} gave up waiting for Temporal at ${address} \\(plaintext \\(no TLS\\)\\) after [\\d.]+ s \\(REWIND_CONNECT_TIMEOUT=2 s\\): nothing answers \\((it accepts connections but does not answer in time|no answer in time)\\)$`,
          ),
        );
      }
    } finally {
      silent.close();
    }
  }, 120_000);

  it("a cluster that answers and refuses (TLS towards a plaintext server) still fails at once, with today's advice", async () => {
    const env = settings(inject("temporalAddress"), { TEMPORAL_TLS: "true", REWIND_PORT: "0" });
    const began = Date.now();
    const [worker, api] = await Promise.all([runRewind(["worker"], env, 60_000), runRewind(["api"], env, 60_000)]);
    expect(Date.now() - began, "no wait").toBeLessThan(30_000);
    for (const result of [worker, api]) {
      expect(result.code, result.output).toBe(1);
      expect(result.output).not.toContain("is waiting for Temporal");
      expect(result.output.trimEnd().split("\n").at(-1)).toMatch(
        /^rewind: cannot connect to Temporal at 127\.0\.0\.1:\d+ \(TLS, no client certificate\): .+; check TEMPORAL_ADDRESS and TEMPORAL_TLS_\*/,
      );
    }
  });

  it("a stop while waiting ends the wait at once", async () => {
    const worker = start(["worker"], settings(`127.0.0.1:${await getFreePort()}`));
    await worker.waitFor(/the worker is waiting for Temporal/);
    await worker.stop("SIGTERM");
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    expect(worker.output()).toContain("stopped before the worker started");
  });
});
