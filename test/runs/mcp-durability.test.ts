/**
 * Durable MCP calls: a worker SIGKILLed in the middle of a 50-call run is replaced, the run
 * completes with the right result, and an idempotent server saw each key's effect exactly once.
 * An at_most_once call whose connection drops after sending is never sent again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getStatusQuery } from "../../src/workflows/run/messages.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { IDEMPOTENCY_KEY, droppingTool, effectCounterTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { expectRunGoing } from "../helpers/run-going.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { spawnWorker } from "../helpers/worker-process.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
let server: TestMcpServer;
let toolset: string;
const effects = effectCounterTool();
const once = droppingTool({ dropAttempts: 5, name: "send_email" });

beforeAll(async () => {
  stack = await startRewindStack({ noWorker: true });
  server = await startMcpServer({ tools: [effects.tool, once.tool] });
  toolset = await registerToolset(stack, {
    mcpServers: { svc: { url: server.url } },
    policies: { "svc.send_email": { onInterruption: "at_most_once" } },
  });
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

const workerEnv = () => ({
  TEMPORAL_ADDRESS: stack.address,
  REWIND_TASK_QUEUE: stack.config.temporal.taskQueue,
  REWIND_STATE_DIR: stack.config.stateDir,
});

describe("durable MCP calls", () => {
  it("completes a 50-call run across a SIGKILLed worker with each effect exactly once", async () => {
    const first = await spawnWorker(workerEnv());
    const id = await startRun(stack, {
      toolset,
      script: `import { svc } from "rewind:tools";
export default async function main() {
  let last = 0;
  for (let i = 0; i < 30; i++) {
    const r = await svc.record_effect({ label: "s" + i }) as { effects: number };
    last = r.effects;
  }
  const parallel = await Promise.all(Array.from({ length: 20 }, (_, i) => svc.record_effect({ label: "p" + i })));
  return { sequential: 30, parallel: parallel.length, sawEffects: last > 0 };
}`,
    });
    const handle = stack.client.workflow.getHandle(id);
    // (The query fails until the worker has taken the run's first task.)
    await waitFor("12 of the run's calls to be issued", async () => (await handle.query(getStatusQuery)).calls, {
      intervalMs: 50,
      retryErrors: true,
      until: (calls) => calls.total >= 12,
    });
    // The kill must come mid-run: at least 12 calls issued, and fewer than 50 of them ended.
    expect((await handle.query(getStatusQuery)).calls.total).toBeGreaterThanOrEqual(12);
    await expectRunGoing(stack.client, id, { calls: 50 });
    expect([...effects.state.effects.keys()].filter((key) => key.startsWith(`${id}/`)).length).toBeLessThan(50);
    await first.kill("SIGKILL");
    const second = await spawnWorker(workerEnv());
    try {
      const done = await waitForRun(stack, id, 90_000);
      expect(done.status, JSON.stringify(done.error)).toBe("completed");
      expect(done.result).toEqual({ sequential: 30, parallel: 20, sawEffects: true });
    } finally {
      await second.kill("SIGTERM");
    }
    const keys = [...effects.state.effects.entries()].filter(([key]) => key.startsWith(`${id}/`));
    expect(keys).toHaveLength(50);
    expect(keys.every(([, count]) => count === 1)).toBe(true);
    expect(new Set(keys.map(([key]) => key))).toEqual(new Set(Array.from({ length: 50 }, (_, i) => `${id}/${i + 1}`)));
  }, 150_000);

  it("never sends an at_most_once call twice when its connection drops after sending", async () => {
    const worker = await spawnWorker(workerEnv());
    try {
      const id = await startRun(stack, {
        toolset,
        script:
          'import { svc, ToolError } from "rewind:tools";\nexport default async () => { try { await svc.send_email({}); return "sent"; } catch (e) { return e instanceof ToolError ? e.code : String(e); } };',
      });
      const done = await waitForRun(stack, id, 60_000);
      expect(done.result).toBe("outcomeUnknown");
      expect(server.calls.filter((c) => c.name === "send_email" && c.meta[IDEMPOTENCY_KEY] === `${id}/1`)).toHaveLength(
        1,
      );
    } finally {
      await worker.kill("SIGTERM");
    }
  }, 90_000);
});
