/**
 * Host tools served by a harness's worker made with the SDK: results and the idempotency key
 * reach the right places, a ToolError is final, a worker that stops heartbeating is replaced,
 * and cancelling the run reaches the tool through ctx.signal.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolError, createHostToolWorker, type HostToolContext, type HostToolWorker } from "../../src/sdk/index.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { expectRunGoing } from "../helpers/run-going.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
let host: HostToolWorker;
let hostRunning: Promise<void>;
let toolset: string;
const taskQueue = `harness-${randomUUID()}`;
const seen: { tool: string; key: string; attempt: number; args: unknown }[] = [];
const cancelled: string[] = [];
const OBJECT = { type: "object" };

beforeAll(async () => {
  stack = await startRewindStack();
  const record = (tool: string, args: unknown, ctx: HostToolContext) =>
    seen.push({ tool, key: ctx.idempotencyKey, attempt: ctx.attempt, args });
  host = await createHostToolWorker({
    address: stack.address,
    taskQueue,
    tools: {
      "harness.ask_user": async (args, ctx) => {
        record("ask_user", args, ctx);
        return { yes: String(args["question"]).includes("?") };
      },
      "harness.refuse": async (args, ctx) => {
        record("refuse", args, ctx);
        throw new ToolError("refused", "the user said no", { why: "policy" });
      },
      "harness.flaky": async (args, ctx) => {
        record("flaky", args, ctx);
        if (ctx.attempt < 3) throw new Error("database hiccup");
        return { attempt: ctx.attempt };
      },
      "harness.flaky_then_refuse": async (args, ctx) => {
        record("flaky_then_refuse", args, ctx);
        if (ctx.attempt < 2) throw new Error("database hiccup");
        throw new ToolError("refused", "refused on a later attempt");
      },
      "harness.wait": async (args, ctx) => {
        record("wait", args, ctx);
        if (ctx.attempt > 1) return { from: "second worker", attempt: ctx.attempt };
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
        cancelled.push(ctx.idempotencyKey);
        return null;
      },
    },
  });
  hostRunning = host.run();
  toolset = await registerToolset(stack, {
    hostTools: {
      harness: {
        taskQueue,
        tools: {
          ask_user: {
            description: "Ask the user.",
            inputSchema: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
          },
          refuse: { inputSchema: OBJECT },
          flaky: { inputSchema: OBJECT },
          flaky_then_refuse: { inputSchema: OBJECT },
          wait: { inputSchema: OBJECT },
        },
      },
    },
    policies: { "harness.wait": { heartbeatTimeout: "2s" } },
  });
});
afterAll(async () => {
  await host?.shutdown();
  await hostRunning;
  await stack?.stop();
});

/** The journal's `attempts` of each call of the run, in seq order. */
async function journalAttempts(runId: string): Promise<number[]> {
  const journal = await stack.request("GET", `/v1/runs/${runId}/journal`);
  return (journal.body["entries"] as { attempts: number }[]).map((entry) => entry.attempts);
}

const script = (body: string) =>
  `import { harness, ToolError } from "rewind:tools";\nexport default async function main() {\n${body}\n}`;

describe("host tools", () => {
  it("returns the tool's result to the script, with <run_id>/<seq> in ctx", async () => {
    const id = await startRun(stack, {
      toolset,
      script: script(
        '  await harness.ask_user({ question: "warm-up" });\n  return harness.ask_user({ question: "ship it?" });',
      ),
    });
    const done = await waitForRun(stack, id);
    expect(done.result).toEqual({ yes: true });
    expect(seen.filter((s) => s.key.startsWith(`${id}/`)).map((s) => s.key)).toEqual([`${id}/1`, `${id}/2`]);
  });

  it("schedules a host tool without a policy with a 60-second heartbeat timeout", async () => {
    const id = await startRun(stack, {
      toolset,
      script: script('  return harness.ask_user({ question: "defaults?" });'),
    });
    expect((await waitForRun(stack, id)).status).toBe("completed");
    const history = await stack.client.workflow.getHandle(id).fetchHistory();
    const scheduled = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes)
      .find((a) => a?.taskQueue?.name === taskQueue);
    expect(scheduled, "the host tool's activity was scheduled").toBeDefined();
    expect(Number(scheduled?.heartbeatTimeout?.seconds)).toBe(60);
  });

  it("gives the script a host tool's ToolError, with its code, without retrying", async () => {
    const id = await startRun(stack, {
      toolset,
      script: script(
        "  try { await harness.refuse({}); } catch (e) { return e instanceof ToolError ? [e.code, e.message, e.details] : String(e); }",
      ),
    });
    const done = await waitForRun(stack, id);
    expect(done.result).toEqual(["refused", "the user said no", { why: "policy" }]);
    expect(seen.filter((s) => s.key === `${id}/1`)).toHaveLength(1);
  });

  it("retries any other throw as an interruption, with the same key", async () => {
    const id = await startRun(stack, { toolset, script: script("  return harness.flaky({});") });
    const done = await waitForRun(stack, id, 30_000);
    expect(done.result).toEqual({ attempt: 3 });
    expect(seen.filter((s) => s.key === `${id}/1`).map((s) => s.attempt)).toEqual([1, 2, 3]);
    expect(await journalAttempts(id), "the journal counts the three attempts the call took").toEqual([3]);
  });

  it("journals the attempts of a call that succeeds at once, and of one refused on a later attempt", async () => {
    const id = await startRun(stack, {
      toolset,
      script: script(
        '  await harness.ask_user({ question: "once?" });\n  try { await harness.flaky_then_refuse({}); } catch (e) { return e instanceof ToolError ? e.code : String(e); }',
      ),
    });
    const done = await waitForRun(stack, id, 30_000);
    expect(done.result).toBe("refused");
    expect(await journalAttempts(id)).toEqual([1, 2]);
  });

  it("retries a call whose worker stops heartbeating, on another worker", async () => {
    const frozenQueue = `frozen-${randomUUID()}`;
    const frozenToolset = await registerToolset(stack, {
      hostTools: { harness: { taskQueue: frozenQueue, tools: { wait: { inputSchema: OBJECT } } } },
      policies: { "harness.wait": { heartbeatTimeout: "2s" } },
    });
    const child = spawn(
      process.execPath,
      [
        "--disable-warning=ExperimentalWarning",
        path.join(REPO_ROOT, "test/fixtures/host-worker-process.ts"),
        stack.address,
        frozenQueue,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const printed = (text: string) =>
      waitFor(`the host worker to print "${text}"`, () => output.includes(text), { intervalMs: 50 });
    let second: HostToolWorker | undefined;
    try {
      await printed("ready");
      const id = await startRun(stack, { toolset: frozenToolset, script: script("  return harness.wait({});") });
      await printed("attempt 1");
      // The freeze and the kill must come while the call is still running (and the run going).
      await expectRunGoing(stack.client, id);
      // Frozen past its heartbeat timeout, then gone: a frozen process's open polls would
      // still take (and sit on) retried attempts, exactly as a hung machine's do.
      child.kill("SIGSTOP");
      await waitFor(
        "the frozen call's heartbeat timeout to end its first attempt",
        async () => (await stack.client.workflow.getHandle(id).describe()).raw.pendingActivities ?? [],
        { until: (pending) => pending.some((activity) => (activity.attempt ?? 0) >= 2) },
      );
      await expectRunGoing(stack.client, id);
      child.kill("SIGKILL");
      second = await createHostToolWorker({
        address: stack.address,
        taskQueue: frozenQueue,
        tools: { "harness.wait": async (_args, ctx) => ({ from: "second worker", attempt: ctx.attempt }) },
      });
      const running = second.run();
      const done = await waitForRun(stack, id, 30_000);
      expect(done.result, JSON.stringify(done)).toEqual({ from: "second worker", attempt: expect.any(Number) });
      expect((done.result as { attempt: number }).attempt).toBeGreaterThanOrEqual(2);
      await second.shutdown();
      await running;
    } finally {
      child.kill("SIGKILL");
    }
  }, 60_000);

  it("fires ctx.signal when the run is cancelled", async () => {
    const id = await startRun(stack, { toolset, script: script("  return harness.wait({});") });
    await waitFor("the host tool to receive the call", () => seen.some((s) => s.key === `${id}/1`), { intervalMs: 50 });
    expect((await stack.request("POST", `/v1/runs/${id}/cancel`)).status).toBe(200);
    await waitFor("the call's ctx.signal to fire", () => cancelled.includes(`${id}/1`));
    expect((await waitForRun(stack, id)).status).toBe("cancelled");
  });
});
