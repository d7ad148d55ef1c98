/**
 * MCP tool calls from scripts, end to end against real MCP servers: results in issue and
 * completion order, the idempotency key on every attempt, each policy's behaviour, run-time
 * validation, concurrency limits, and a clean replay of the finished history.
 */
import path from "node:path";
import { defaultPayloadConverter } from "@temporalio/common";
import type { temporal } from "@temporalio/proto";
import { Worker } from "@temporalio/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_WORKFLOW_TYPE, type RunInput } from "../../src/shared/run.ts";
import { SANDBOX_RUNTIME_VERSION } from "../../src/shared/runtime-version.ts";
import type { McpCallInput } from "../../src/shared/tool-call.ts";
import { loadWorkflowBundle } from "../../src/worker/workflow-bundle.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import {
  IDEMPOTENCY_KEY,
  droppingTool,
  echoTool,
  effectCounterTool,
  failingTool,
  fixedTool,
  slowTool,
} from "../helpers/mcp-test-tools.ts";
import { acceleratorsOn, startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { REPLAY_SINKS } from "../../src/worker/index.ts";

/** The output schema `counted`, `miscounted` and `uncounted` declare: `{ n: integer }`. */
const COUNT_SCHEMA = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };

let stack: RewindStack;
let server: TestMcpServer;
let toolset: string;
const effects = effectCounterTool();
const flaky = droppingTool({ dropAttempts: 2 });
const slow = slowTool({ delayMs: 300 });
const limited = slowTool({ delayMs: 200, name: "limited" });
const hang = slowTool({ delayMs: 10_000, name: "hang" });

beforeAll(async () => {
  stack = await startRewindStack();
  server = await startMcpServer({
    tools: [
      echoTool(),
      effects.tool,
      flaky.tool,
      slow.tool,
      limited.tool,
      hang.tool,
      failingTool(),
      fixedTool("structured", { content: [{ type: "text", text: "ignored" }], structuredContent: { answer: 42 } }),
      fixedTool("plain", { content: [{ type: "text", text: "not json" }] }),
      fixedTool("digits", { content: [{ type: "text", text: "9007199254740993" }] }),
      fixedTool("object_text", { content: [{ type: "text", text: '{"a":1}' }] }),
      fixedTool("huge", { content: [{ type: "text", text: "x".repeat(17 * 1024 * 1024) }] }),
      fixedTool("counted", { content: [], structuredContent: { n: 3 } }, { outputSchema: COUNT_SCHEMA }),
      fixedTool(
        "miscounted",
        { content: [{ type: "text", text: "oops" }], structuredContent: { n: "oops" } },
        {
          outputSchema: COUNT_SCHEMA,
        },
      ),
      fixedTool("uncounted", { content: [{ type: "text", text: '{"n":3}' }] }, { outputSchema: COUNT_SCHEMA }),
      fixedTool("quota", {
        isError: true,
        content: [{ type: "text", text: "over quota" }],
        structuredContent: { reason: "quota", retryAfterSeconds: 30 },
      }),
      {
        name: "typed",
        inputSchema: { type: "object", properties: { n: { type: "integer", minimum: 1 } }, required: ["n"] },
        handler: async () => ({ content: [{ type: "text", text: "1" }] }),
      },
    ],
  });
  toolset = await registerToolset(stack, {
    mcpServers: { svc: { url: server.url } },
    policies: { "svc.hang": { onInterruption: "at_most_once", timeout: "1s" }, "svc.limited": { concurrency: 4 } },
  });
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

/** The inputs `callMcpTool` was scheduled with in a run's history. */
function mcpCallInputs(history: temporal.api.history.v1.IHistory): McpCallInput[] {
  return (history.events ?? []).flatMap((e) => {
    const scheduled = e.activityTaskScheduledEventAttributes;
    const payload = scheduled?.activityType?.name === "callMcpTool" ? scheduled.input?.payloads?.[0] : undefined;
    return payload ? [defaultPayloadConverter.fromPayload<McpCallInput>(payload)] : [];
  });
}

/**
 * The most `callMcpTool` activities of each tool (and of all tools, under "*") scheduled and not
 * yet finished at any point of a run's history: what the run's limits count. A call's place is
 * freed when its result reaches the run, and the call that takes it is scheduled after that.
 */
function peakScheduled(history: temporal.api.history.v1.IHistory): Map<string, number> {
  const toolOf = new Map<string, string>();
  const open = new Map<string, number>();
  const peak = new Map<string, number>();
  const add = (tool: string, n: number) => {
    for (const key of [tool, "*"]) {
      open.set(key, (open.get(key) ?? 0) + n);
      peak.set(key, Math.max(peak.get(key) ?? 0, open.get(key) ?? 0));
    }
  };
  for (const e of history.events ?? []) {
    const scheduled = e.activityTaskScheduledEventAttributes;
    const payload = scheduled?.activityType?.name === "callMcpTool" ? scheduled.input?.payloads?.[0] : undefined;
    if (payload) {
      const { tool } = defaultPayloadConverter.fromPayload<McpCallInput>(payload);
      toolOf.set(String(e.eventId), tool);
      add(tool, 1);
    }
    const ended =
      e.activityTaskCompletedEventAttributes ??
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes;
    const tool = ended ? toolOf.get(String(ended.scheduledEventId)) : undefined;
    if (tool !== undefined) add(tool, -1);
  }
  return peak;
}

async function run(script: string, input?: unknown) {
  const id = await startRun(stack, {
    toolset,
    script: `import { svc, ToolError } from "rewind:tools";\n${script}`,
    input,
  });
  return { id, ...(await waitForRun(stack, id, 60_000)) };
}

describe("MCP calls from scripts", () => {
  it("runs sequential and parallel calls and journals each one", async () => {
    const done = await run(`export default async function main() {
  const first = await svc.echo({ message: "one" }) as { args: { message: string } };
  const [a, b, c] = await Promise.all([svc.structured({}), svc.plain({}), svc.echo({ message: "two" })]);
  return { first: first.args.message, a, b, c: (c as { args: unknown }).args };
}`);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual({ first: "one", a: { answer: 42 }, b: "not json", c: { message: "two" } });
    const journal = await stack.request("GET", `/v1/runs/${done.id}/journal`);
    const entries = journal.body["entries"] as {
      seq: number;
      tool: string;
      status: string;
      args: unknown;
      attempts: number;
    }[];
    expect(entries.map((e) => [e.seq, e.tool, e.status])).toEqual([
      [1, "svc.echo", "completed"],
      [2, "svc.structured", "completed"],
      [3, "svc.plain", "completed"],
      [4, "svc.echo", "completed"],
    ]);
    expect(entries[0]?.args).toEqual({ message: "one" });
    expect((journal.body["completionOrder"] as number[])[0]).toBe(1);
  });

  it("sends <run_id>/<seq> on every attempt: a call dropped twice is answered on the third", async () => {
    const done = await run("export default async () => { await svc.echo({}); return await svc.flaky({}); };");
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual({ attempt: 3 });
    const attempts = server.calls.filter((c) => c.name === "flaky" && c.meta[IDEMPOTENCY_KEY] === `${done.id}/2`);
    expect(attempts).toHaveLength(3);
    const echo = server.calls.find((c) => c.name === "echo" && c.meta[IDEMPOTENCY_KEY] === `${done.id}/1`);
    expect(echo).toBeDefined();
    const journal = await stack.request("GET", `/v1/runs/${done.id}/journal`);
    expect((journal.body["entries"] as { attempts: number }[])[1]?.attempts).toBe(3);
  });

  it("schedules a tool without a policy with the defaults: 5-minute attempts, retried up to 5 times", async () => {
    const done = await run('export default async () => svc.echo({ message: "defaults" });');
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    const history = await stack.client.workflow.getHandle(String(done.id)).fetchHistory();
    const scheduled = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes)
      .find((a) => a?.activityType?.name === "callMcpTool");
    // The MCP request gets the 5 minutes; the activity's own timeout is a backstop 5 s behind it.
    expect(Number(scheduled?.startToCloseTimeout?.seconds)).toBe(5 * 60 + 5);
    expect(scheduled?.retryPolicy?.maximumAttempts).toBe(5);
  });

  it("gives an at_most_once call that times out outcomeUnknown, after exactly one attempt", async () => {
    const before = hang.state.started;
    const done = await run(
      'export default async () => { try { await svc.hang({}); return "answered"; } catch (e) { return e instanceof ToolError ? [e.code, e.seq, e.tool] : String(e); } };',
    );
    expect(done.result).toEqual(["outcomeUnknown", 1, "svc.hang"]);
    // Not a wait for something to happen: the period in which no second attempt may reach the server.
    await new Promise((r) => setTimeout(r, 1500));
    expect(hang.state.started - before).toBe(1);
  });

  it("turns isError into toolFailed, not retried, and fails the run when uncaught", async () => {
    const caught = await run(
      'export default async () => { try { await svc.fail({}); } catch (e) { return e instanceof ToolError ? [e.code, e.message] : "other"; } };',
    );
    expect(caught.result).toEqual(["toolFailed", expect.stringContaining("the repository does not exist")]);
    expect(server.calls.filter((c) => c.name === "fail" && c.meta[IDEMPOTENCY_KEY] === `${caught.id}/1`)).toHaveLength(
      1,
    );
    const uncaught = await run("export default async () => svc.fail({});");
    expect(uncaught.status).toBe("failed");
    expect(uncaught.error?.message).toMatch(/ToolError\(toolFailed\) from svc\.fail \(seq 1\)/);
    expect(uncaught.error?.details).toMatchObject({ code: "toolFailed", tool: "svc.fail", seq: 1 });
  });

  it("fails a call whose result is over 16 MiB of JSON once, with a ToolError saying so, and the run goes on", async () => {
    const done = await run(`export default async () => {
  try { await svc.huge({}); return "no error"; } catch (e) { return e instanceof ToolError ? [e.code, e.message, (e.details as { reason?: string }).reason, (await svc.echo({ after: 1 }) as { args: unknown }).args] : String(e); }
};`);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual([
      "toolFailed",
      expect.stringMatching(/svc\.huge: the result is 17825794 bytes of JSON, more than the 16777216/),
      "resultTooLarge",
      { after: 1 },
    ]);
    // A result too big for history is a tool's failure: not retried.
    expect(server.calls.filter((c) => c.name === "huge" && c.meta[IDEMPOTENCY_KEY] === `${done.id}/1`)).toHaveLength(1);
  });

  it("refuses invalid arguments with invalidArguments before anything reaches the server", async () => {
    const before = server.calls.filter((c) => c.name === "typed").length;
    const done = await run(
      'export default async () => { try { await svc.typed({ n: 0 }); } catch (e) { return e instanceof ToolError ? [e.code, e.message] : "other"; } };',
    );
    expect(done.result).toEqual(["invalidArguments", expect.stringMatching(/arguments\/n must be >= 1/)]);
    expect(server.calls.filter((c) => c.name === "typed").length).toBe(before);
  });

  it("keeps 40 parallel calls within 16 in flight, and a tool's own limit of 4", async () => {
    const done = await run(
      "export default async () => { const a = await Promise.all(Array.from({ length: 40 }, () => svc.slow({}))); const b = await Promise.all(Array.from({ length: 12 }, () => svc.limited({}))); return [a.length, b.length]; };",
    );
    expect(done.result).toEqual([40, 12]);
    // The limits are the run's: 16 calls scheduled and unfinished at once, 4 of `limited`.
    const peak = peakScheduled(await stack.client.workflow.getHandle(done.id).fetchHistory());
    expect([peak.get("*"), peak.get("slow"), peak.get("limited")]).toEqual([16, 16, 4]);
    // The server never had more in its handlers. It sees 16 at once only when the first 16 reach it
    // within the 300 ms the first one takes, which a loaded machine's scheduling does not promise.
    expect(slow.state.maxInFlight).toBeLessThanOrEqual(16);
    expect(limited.state.maxInFlight).toBeLessThanOrEqual(4);
    expect([slow.state.started, limited.state.started]).toEqual([40, 12]);
  });

  it.skipIf(!acceleratorsOn("speculative-steps", "eager-calls"))(
    "adopts the speculative steps taken on the worker that finished each call: no local activity after the first step, in sequence or 16 at a time",
    async () => {
      const done = await run(`export default async function main() {
  let total = 0;
  // Echo's declared result is what earlier runs observed; say what this one gets.
  const echo = async (i: number) => ((await svc.echo({ i })) as unknown as { args: { i: number } }).args.i;
  for (let i = 0; i < 5; i++) total += await echo(i);
  const lanes = Array.from({ length: 16 }, async (_, lane) => {
    let sum = 0;
    for (let i = lane; i < 48; i += 16) sum += await echo(i);
    return sum;
  });
  for (const sum of await Promise.all(lanes)) total += sum;
  return total;
}`);
      expect(done.status, JSON.stringify(done.error)).toBe("completed");
      expect(done.result).toBe(10 + (47 * 48) / 2);
      const history = await stack.client.workflow.getHandle(done.id).fetchHistory();
      // Local activities leave markers; so does a patch (not a step).
      const markers = (history.events ?? []).filter(
        (e) => e.markerRecordedEventAttributes?.markerName === "core_local_activity",
      ).length;
      const completions = (history.events ?? []).filter((e) => e.activityTaskCompletedEventAttributes).length;
      expect(completions).toBe(53);
      // The first step is the cold start; every later step came back with a call's result.
      expect(markers).toBe(1);
      const journal = await stack.request("GET", `/v1/runs/${done.id}/journal`);
      expect((journal.body["completionOrder"] as number[]).slice().sort((a, b) => a - b)).toEqual(
        Array.from({ length: 53 }, (_, i) => i + 1),
      );
    },
  );

  it("gives a tool's text to the script as the string it is, unless it is a JSON object or array", async () => {
    const done = await run(
      "export default async () => { const d = await svc.digits({}); const o = await svc.object_text({}); return { d, type: typeof d, o }; };",
    );
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual({ d: "9007199254740993", type: "string", o: { a: 1 } });
    const inputs = mcpCallInputs(await stack.client.workflow.getHandle(done.id).fetchHistory());
    expect(inputs.map((i) => i.runtimeVersion)).toEqual([SANDBOX_RUNTIME_VERSION, SANDBOX_RUNTIME_VERSION]);
  });

  it("keeps parsing any JSON text for a run that started on runtime 2, and schedules its calls as that release did", async () => {
    const script =
      "export default async () => { const d = await svc.digits({}); const o = await svc.object_text({}); return { d, type: typeof d, o }; };";
    const template = await run(script);
    const history = await stack.client.workflow.getHandle(template.id).fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    if (!started) throw new Error("the run's history has no start input");
    // The same run as a release of runtime 2 would have started it.
    const old: RunInput = {
      ...defaultPayloadConverter.fromPayload<RunInput>(started),
      runId: `${template.id}_v2`,
      runtimeVersion: 2,
    };
    const handle = await stack.client.workflow.start(RUN_WORKFLOW_TYPE, {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId: old.runId,
      args: [old],
    });
    expect(await handle.result()).toEqual({ d: 9007199254740992, type: "number", o: { a: 1 } });
    const inputs = mcpCallInputs(await handle.fetchHistory());
    expect(inputs).toHaveLength(2);
    for (const input of inputs) expect(input).not.toHaveProperty("runtimeVersion");
  });

  it("checks a result against the tool's output schema: one that does not fit, or no structuredContent, fails the call invalidResult", async () => {
    const done = await run(`export default async () => {
  const outcome = async (call: () => Promise<unknown>) => { try { return { value: await call() }; } catch (e) { const t = e as ToolError; return { code: t.code, message: t.message, details: t.details }; } };
  return {
    counted: await outcome(() => svc.counted({})),
    miscounted: await outcome(() => svc.miscounted({})),
    uncounted: await outcome(() => svc.uncounted({})),
  };
};`);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    const result = done.result as Record<
      string,
      { value?: unknown; code?: string; message?: string; details?: unknown }
    >;
    expect(result["counted"]).toEqual({ value: { n: 3 } });
    expect(result["miscounted"]).toMatchObject({
      code: "invalidResult",
      message: "svc.miscounted: the result does not fit the tool's output schema: result/n must be integer",
      details: {
        reason: "outputSchema",
        errors: [{ path: "/n", message: "must be integer" }],
        structuredContent: { n: "oops" },
        content: [{ type: "text", text: "oops" }],
      },
    });
    expect(result["uncounted"]).toMatchObject({
      code: "invalidResult",
      message: "svc.uncounted: the tool declares an output schema but its result has no structuredContent",
      details: { reason: "noStructuredContent", structuredContent: null },
    });
    // Only tools that declare a schema carry it to the activity.
    const inputs = mcpCallInputs(await stack.client.workflow.getHandle(done.id).fetchHistory());
    expect(inputs.map((i) => i.outputSchema)).toEqual([COUNT_SCHEMA, COUNT_SCHEMA, COUNT_SCHEMA]);
  });

  it("keeps a failed tool's structuredContent in ToolError.details beside its content", async () => {
    const done = await run(
      "export default async () => { try { await svc.quota({}); } catch (e) { const t = e as ToolError; return { code: t.code, details: t.details }; } };",
    );
    expect(done.result).toEqual({
      code: "toolFailed",
      details: {
        content: [{ type: "text", text: "over quota" }],
        structuredContent: { reason: "quota", retryAfterSeconds: 30 },
      },
    });
  });

  it("leaves results unchecked and failures as they were for a run that started on runtime 3", async () => {
    const script = `export default async () => {
  const miscounted = await svc.miscounted({});
  try { await svc.quota({}); } catch (e) { return { miscounted, details: (e as ToolError).details }; }
};`;
    const template = await run(script);
    expect(template.status).toBe("failed");
    const history = await stack.client.workflow.getHandle(template.id).fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    if (!started) throw new Error("the run's history has no start input");
    const old: RunInput = {
      ...defaultPayloadConverter.fromPayload<RunInput>(started),
      runId: `${template.id}_v3`,
      runtimeVersion: 3,
    };
    const handle = await stack.client.workflow.start(RUN_WORKFLOW_TYPE, {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId: old.runId,
      args: [old],
    });
    expect(await handle.result()).toEqual({
      miscounted: { n: "oops" },
      details: { content: [{ type: "text", text: "over quota" }] },
    });
    for (const input of mcpCallInputs(await handle.fetchHistory())) expect(input).not.toHaveProperty("outputSchema");
  });

  it("names, when a script fails, the call it received last and that result's shape, never its values", async () => {
    const done = await run(
      "export default async () => { await svc.echo({ message: 'first' }); const r = (await svc.structured({})) as unknown as { data: { name: string } }; return r.data.name; };",
    );
    expect(done.status).toBe("failed");
    const error = done.error as { message: string; details?: { lastReceived?: unknown } };
    expect(error.message).toMatch(/^TypeError: .*reading 'name'/);
    expect(error.message).toContain(
      "; the last call it received was svc.structured (seq 2), which returned { answer: number }",
    );
    expect(error.message).not.toContain("42");
    expect(error.details?.lastReceived).toEqual({
      seq: 2,
      tool: "svc.structured",
      outcome: "result",
      shape: { type: "object", properties: { answer: { type: "number" } }, required: ["answer"] },
    });
  });

  it("replays the finished history of a run with tool calls without non-determinism", async () => {
    const done = await run(
      "export default async () => { const r = await Promise.all([svc.echo({ message: String(Math.random()) }), svc.slow({}), svc.structured({})]); await svc.record_effect({ label: String(Date.now()) }); return r.length; };",
    );
    expect(done.status).toBe("completed");
    const history = await stack.client.workflow.getHandle(done.id).fetchHistory();
    const bundle = await loadWorkflowBundle(path.join(stack.config.stateDir, "cache"));
    await expect(
      Worker.runReplayHistory({ workflowBundle: bundle, sinks: REPLAY_SINKS }, history, done.id),
    ).resolves.toBeUndefined();
  });
});
