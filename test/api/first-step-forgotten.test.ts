/**
 * Beside a worker, the API takes a new run's first step before it starts the run, which leaves
 * the run's isolate warm in that worker and opens the MCP sessions its calls will use. When the
 * start then fails (Temporal unavailable), the run will never step there: the isolate is given
 * back at once, and the sessions the step opened are closed, instead of both waiting for their
 * idle timers. And the pool retires a run's sessions by their key's prefix, not other runs'.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSessionsPrefix, sessionKeys } from "../../src/activities/call-mcp-tool.ts";
import { createMcpPool } from "../../src/mcp/index.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRestartableTemporal, type RestartableTemporal } from "../helpers/restartable-temporal.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

/** A run that waits after its first step: its isolate is kept warm for the next one. */
const WAITING_SCRIPT = `import { sleep } from "rewind:tools";
export default async () => { await sleep(50); return "slept"; };`;

let temporal: RestartableTemporal;
let server: TestMcpServer;
let stack: RewindStack;

beforeAll(async () => {
  [temporal, server] = await Promise.all([startRestartableTemporal(), startMcpServer({ tools: [echoTool()] })]);
  stack = await startRewindStack({ eagerStart: true, env: { TEMPORAL_ADDRESS: temporal.address } });
}, 120_000);
afterAll(async () => {
  await temporal?.start().catch(() => undefined);
  await stack?.stop();
  await server?.close();
  await temporal?.dispose();
});

describe("a first step whose run could not start", () => {
  it("gives the run's warm isolate back when the start fails", async () => {
    const sandbox = stack.worker?.sandbox;
    if (!sandbox) throw new Error("the stack has no worker");
    // Up: the same script starts and completes, its step carried.
    const ok = await stack.request("POST", "/v1/runs", { script: WAITING_SCRIPT });
    expect(ok.status).toBe(201);
    expect((await waitForRun(stack, String(ok.body["id"]))).status).toBe("completed");
    await waitFor("no warm isolate", () => sandbox.warmCount, { timeoutMs: 10_000, until: (n) => n === 0 });

    await temporal.stop();
    try {
      const refused = await stack.request("POST", "/v1/runs", { script: WAITING_SCRIPT });
      expect(refused.status).toBe(503);
      expect(sandbox.warmCount).toBe(0);
    } finally {
      await temporal.start();
    }
  }, 120_000);

  it("retires the sessions of one run by their keys, leaving another run's open", async () => {
    const pool = createMcpPool({});
    try {
      const headers = { authorization: "Bearer t" };
      const key = (runId: string) => sessionKeys("default", runId, server.url, headers).poolKey;
      pool.open(server.url, headers, key("run_a"));
      pool.open(server.url, headers, key("run_b"));
      await waitFor("both sessions to open", () => server.stats.sessionsOpened, {
        timeoutMs: 5_000,
        until: (n) => n >= 2,
      });
      const deletedBefore = server.stats.sessionsDeleted;
      pool.retireWhereKeyStarts(runSessionsPrefix("default", "run_a"));
      await waitFor("run_a's session to be deleted", () => server.stats.sessionsDeleted, {
        timeoutMs: 5_000,
        until: (n) => n === deletedBefore + 1,
      });
      // run_b's session is still the pool's: a call on it opens no new session.
      const opened = server.stats.sessionsOpened;
      await pool.callTool({
        url: server.url,
        headers,
        poolKey: key("run_b"),
        name: "echo",
        arguments: { x: 1 },
        meta: {},
        timeoutMs: 5_000,
      });
      expect(server.stats.sessionsOpened).toBe(opened);
      expect(server.stats.sessionsDeleted).toBe(deletedBefore + 1);
    } finally {
      await pool.close();
    }
  }, 60_000);
});
