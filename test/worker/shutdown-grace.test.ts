/**
 * A `rewind worker` told to stop (SIGTERM) stops polling at once and gives the calls it has in
 * flight REWIND_SHUTDOWN_GRACE to end before it cancels them: with a grace, a call under way is
 * performed once and its result journaled by the stopping worker; with none, the worker stops
 * without waiting for it, and the run carries on on the next worker (the call is sent again
 * under the same key, or ends `outcomeUnknown` if it is at most once).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_SHUTDOWN_GRACE_MS, loadConfig } from "../../src/config.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { slowTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { spawnStackWorker, type WorkerProcess } from "../helpers/worker-process.ts";

const load = (env: Record<string, string>) =>
  loadConfig({ REWIND_STATE_DIR: "/tmp/rewind-config-test", ...env }, "/tmp");

describe("REWIND_SHUTDOWN_GRACE", () => {
  it("is 20 s unless set, a duration when set", () => {
    expect(load({}).shutdownGraceMs).toBe(DEFAULT_SHUTDOWN_GRACE_MS);
    expect(DEFAULT_SHUTDOWN_GRACE_MS).toBe(20_000);
    expect(load({ REWIND_SHUTDOWN_GRACE: "5m" }).shutdownGraceMs).toBe(300_000);
    expect(load({ REWIND_SHUTDOWN_GRACE: "0" }).shutdownGraceMs).toBe(0);
    expect(() => load({ REWIND_SHUTDOWN_GRACE: "soon" })).toThrow(ConfigError);
    expect(() => load({ REWIND_SHUTDOWN_GRACE: "soon" })).toThrow("REWIND_SHUTDOWN_GRACE");
  });
});

describe("a worker told to stop with a call in flight", () => {
  let stack: RewindStack;
  let mcp: TestMcpServer;
  const slow = slowTool({ delayMs: 3_000 });
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    stack = await startRewindStack({ noWorker: true });
    mcp = await startMcpServer({ tools: [slow.tool] });
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.kill("SIGKILL")));
    await mcp?.close();
    await stack?.stop();
  });

  /** One run of one slow call; the worker that took it gets SIGTERM once the call is at the server. */
  async function stopDuringCall(grace: string) {
    const before = { ...slow.state };
    const first = await spawnStackWorker(stack, { REWIND_SHUTDOWN_GRACE: grace });
    workers.push(first);
    const toolset = await registerToolset(stack, { mcpServers: { svc: { url: mcp.url } } });
    const id = await startRun(stack, {
      toolset,
      script: 'import { svc } from "rewind:tools";\nexport default async () => svc.slow({});',
    });
    await waitFor("the call to reach the MCP server", () => slow.state.started > before.started, {
      timeoutMs: 20_000,
    });
    const stoppedAt = Date.now();
    first.child.kill("SIGTERM");
    const exit = await new Promise<number | null>((resolve) => first.child.once("exit", (code) => resolve(code)));
    const stoppingMs = Date.now() - stoppedAt;
    const second = await spawnStackWorker(stack);
    workers.push(second);
    const run = await waitForRun(stack, id, 60_000);
    return {
      exit,
      stoppingMs,
      run,
      started: slow.state.started - before.started,
      completed: slow.state.completed - before.completed,
      cancelled: slow.state.cancelled - before.cancelled,
      output: first.output(),
    };
  }

  it("lets the call end within its grace: performed once, its worker exits 0 after it", async () => {
    const stopped = await stopDuringCall("10s");
    expect(stopped.exit, stopped.output).toBe(0);
    expect(stopped.output).toContain("worker drained and stopped");
    expect(stopped.run).toMatchObject({ status: "completed", result: { slept: 3_000 } });
    expect({ started: stopped.started, completed: stopped.completed, cancelled: stopped.cancelled }).toEqual({
      started: 1,
      completed: 1,
      cancelled: 0,
    });
    // It waited for the call (3 s from its start) rather than the whole grace.
    expect(stopped.stoppingMs).toBeLessThan(10_000);
  });

  it("without a grace, stops at once, not waiting for the call; the run carries on on the next worker", async () => {
    const stopped = await stopDuringCall("0");
    expect(stopped.exit, stopped.output).toBe(0);
    expect(stopped.stoppingMs).toBeLessThan(3_000);
    expect(stopped.run).toMatchObject({ status: "completed", result: { slept: 3_000 } });
  });
});
