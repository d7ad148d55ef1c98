/**
 * Long runs continue as new before history grows too long, carrying the journal: with a small
 * threshold, a run crosses several executions and still returns the right result, with every
 * call in its journal, including calls in flight when the run drained.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { IDEMPOTENCY_KEY, effectCounterTool, slowTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
let server: TestMcpServer;
const effects = effectCounterTool();
const slow = slowTool({ delayMs: 150 });
/** A 1 MB result: carried journals of runs that hold them are far over Temporal's 2 MiB payload limit. */
const megabyte = {
  name: "megabyte",
  inputSchema: { type: "object" },
  handler: async (args: Record<string, unknown>) => ({
    content: [{ type: "text" as const, text: String(args["i"]).padEnd(1_000_000, ".") }],
  }),
};
beforeAll(async () => {
  stack = await startRewindStack({ env: { REWIND_CONTINUE_AS_NEW_EVENTS: "60" } });
  server = await startMcpServer({ tools: [effects.tool, slow.tool, megabyte] });
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

/** How many executions visibility lists for `id`, once it lists more than one (it is eventually consistent). */
function executionsOf(id: string): Promise<number> {
  return waitFor(
    `more than one execution of ${id} to be listed`,
    async () => {
      let count = 0;
      for await (const _ of stack.client.workflow.list({ query: `WorkflowId = '${id}'` })) count++;
      return count;
    },
    { timeoutMs: 10_000, intervalMs: 250, until: (count) => count > 1 },
  );
}

describe("continue-as-new", () => {
  it("keeps the result and the journal whole across executions", async () => {
    const script = [
      'import { sleep } from "rewind:tools";',
      "export default async function main(input: { rounds: number }) {",
      "  const seen: number[] = [];",
      "  for (let i = 0; i < input.rounds; i++) {",
      '    await Promise.all([sleep(5), sleep("10ms")]);',
      "    seen.push(i);",
      "  }",
      "  return { rounds: seen.length, sum: seen.reduce((a, b) => a + b, 0), random: Math.random() < 1 };",
      "}",
    ].join("\n");
    const started = await stack.request("POST", "/v1/runs", { script, input: { rounds: 15 } });
    const id = String(started.body.id);
    const done = await waitForRun(stack, id, 120_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual({ rounds: 15, sum: 105, random: true });

    expect(await executionsOf(id)).toBeGreaterThan(1);

    const journal = await stack.request("GET", `/v1/runs/${id}/journal?limit=1000`);
    const entries = journal.body["entries"] as { seq: number; tool: string; status: string }[];
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(entries.every((e) => e.tool === "rewind.sleep" && e.status === "completed")).toBe(true);
    expect((journal.body["completionOrder"] as number[]).slice().sort((a, b) => a - b)).toEqual(
      entries.map((e) => e.seq),
    );
  }, 150_000);

  it("drains MCP calls in flight before continuing, and sends each call once", async () => {
    const toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
    const id = await startRun(stack, {
      toolset,
      script: `import { svc } from "rewind:tools";
export default async function main() {
  let total = 0;
  for (let i = 0; i < 8; i++) {
    const batch = await Promise.all([svc.slow({}), svc.record_effect({ label: String(i) }), svc.record_effect({ label: "b" + i })]);
    total += batch.length;
  }
  return total;
}`,
    });
    const done = await waitForRun(stack, id, 120_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toBe(24);
    expect(await executionsOf(id)).toBeGreaterThan(1);
    const keys = server.calls
      .filter((c) => c.name === "record_effect" && String(c.meta[IDEMPOTENCY_KEY]).startsWith(`${id}/`))
      .map((c) => c.meta[IDEMPOTENCY_KEY]);
    expect(keys).toHaveLength(16);
    expect(new Set(keys).size).toBe(16);
    const journal = await stack.request("GET", `/v1/runs/${id}/journal?limit=1000`);
    expect((journal.body["entries"] as unknown[]).length).toBe(24);
  }, 150_000);

  it("carries a journal of 1 MB results across executions (kept in the payload store, not in history)", async () => {
    const toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
    const id = await startRun(stack, {
      toolset,
      script: `import { svc } from "rewind:tools";
export default async function main() {
  let total = 0;
  for (let i = 0; i < 25; i++) total += ((await svc.megabyte({ i })) as unknown as string).length;
  return total;
}`,
    });
    const done = await waitForRun(stack, id, 180_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toBe(25_000_000);
    expect(await executionsOf(id)).toBeGreaterThan(1);
  }, 240_000);
});
