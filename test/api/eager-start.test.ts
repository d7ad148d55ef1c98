/**
 * The stack as `npm start` runs it: the API shares the worker's connection, asks Temporal to hand
 * a new run's first workflow task back in the start's answer (eager start), and takes the run's
 * first step in that worker's sandbox before starting it, carried in the run's input. Runs must
 * start eagerly there, adopt their carried step (no local activity: the first workflow task
 * schedules the first calls), and behave as any other run. Runs that wait for their script's
 * approval, or carry an idempotency key, take their first step as before; so do runs of a stack
 * whose API has its own connection.
 */
import type { temporal } from "@temporalio/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseExposition, valueOf } from "../helpers/prometheus-text.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { acceleratorsOn, startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset } from "../helpers/toolset.ts";
import { readRunStart } from "../../src/api/run-start.ts";
import type { RunInput } from "../../src/shared/index.ts";

let eager: RewindStack;
let queued: RewindStack;
let server: TestMcpServer;
const toolsets = { eager: "", queued: "" };

beforeAll(async () => {
  server = await startMcpServer({ tools: [echoTool()] });
  eager = await startRewindStack({ eagerStart: true });
  queued = await startRewindStack();
  toolsets.eager = await registerToolset(eager, { mcpServers: { svc: { url: server.url } } });
  toolsets.queued = await registerToolset(queued, { mcpServers: { svc: { url: server.url } } });
}, 120_000);

afterAll(async () => {
  await eager?.stop();
  await queued?.stop();
  await server?.close();
});

const DOUBLE = "export default async (i: { n: number }) => i.n * 2";
const ECHO_TWICE = `import { svc } from "rewind:tools";
export default async (i: { n: number }) => {
  const a = await svc.echo({ n: i.n });
  const b = await svc.echo({ n: i.n + 1 });
  return [a, b];
};`;

async function starts(stack: RewindStack, start: "eager" | "queued"): Promise<number> {
  return valueOf(parseExposition(await stack.metrics.scrape()), "rewind_api_run_starts_total", { start });
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

async function historyOf(stack: RewindStack, id: string): Promise<HistoryEvent[]> {
  return (await stack.client.workflow.getHandle(id).fetchHistory()).events ?? [];
}

/**
 * Runs ECHO_TWICE with `n` to its end and answers how many of its steps were local activities
 * (each is a marker in history); fails unless both calls came back.
 */
async function echoTwice(
  stack: RewindStack,
  toolset: string,
  n: number,
  extra: { approve?: boolean; headers?: Record<string, string> } = {},
): Promise<number> {
  const body = { script: ECHO_TWICE, toolset, input: { n }, ...(extra.approve ? { approveScript: true } : {}) };
  const started = await stack.request("POST", "/v1/runs", body, extra.headers);
  const id = String(started.body.id);
  if (extra.approve) expect((await stack.request("POST", `/v1/runs/${id}/approve`, {})).status).toBe(200);
  expect((await waitForRun(stack, id)).result).toMatchObject([{ args: { n } }, { args: { n: n + 1 } }]);
  return localActivities(await historyOf(stack, id));
}

/** Local activities the run recorded (each step taken in one is a marker). */
const localActivities = (events: HistoryEvent[]) =>
  events.filter((e) => e.markerRecordedEventAttributes?.markerName === "core_local_activity").length;

describe.skipIf(!acceleratorsOn("eager-start", "api-first-step"))("eager start", () => {
  it("starts runs eagerly when the API shares the worker's connection, and they complete", async () => {
    const before = { eager: await starts(eager, "eager"), queued: await starts(eager, "queued") };
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) {
      const { status, body } = await eager.request("POST", "/v1/runs", { script: DOUBLE, input: { n } });
      expect(status).toBe(201);
      ids.push(String(body.id));
    }
    const done = await Promise.all(ids.map((id) => waitForRun(eager, id)));
    expect(done.map((run) => run.result)).toEqual([0, 2, 4, 6, 8]);
    expect(await starts(eager, "eager")).toBe(before.eager + 5);
    expect(await starts(eager, "queued")).toBe(before.queued);
  });

  it("answers an idempotent repeat with the run the first start made, counted once", async () => {
    const before = await starts(eager, "eager");
    const request = { script: DOUBLE, input: { n: 50 } };
    const headers = { "Idempotency-Key": `eager-${Date.now()}` };
    const first = await eager.request("POST", "/v1/runs", request, headers);
    const repeat = await eager.request("POST", "/v1/runs", request, headers);
    expect(first.status).toBe(201);
    expect(repeat.status).toBe(200);
    expect(repeat.body.id).toBe(first.body.id);
    expect((await waitForRun(eager, String(first.body.id))).result).toBe(100);
    expect(await starts(eager, "eager")).toBe(before + 1);
  });

  it("starts runs the ordinary way when the API has a connection of its own", async () => {
    const { body } = await queued.request("POST", "/v1/runs", { script: DOUBLE, input: { n: 4 } });
    expect((await waitForRun(queued, String(body.id))).result).toBe(8);
    expect(await starts(queued, "queued")).toBe(1);
    expect(await starts(queued, "eager")).toBe(0);
  });
});

describe.skipIf(!acceleratorsOn("eager-start", "api-first-step"))("first step carried in the run's input", () => {
  it("schedules the first call in the run's first workflow task, with no local activity for the step", async () => {
    // The second call's step was the first call's speculative step, taken in the isolate the API's step left warm.
    expect(await echoTwice(eager, toolsets.eager, 3)).toBe(0);
    expect(server.calls.filter((call) => JSON.stringify(call.arguments).includes('"n":3'))).toHaveLength(1);
  });

  it("takes the first step in a local activity on a stack whose API has its own connection", async () => {
    expect(await echoTwice(queued, toolsets.queued, 10)).toBe(1);
  });

  it("does not carry the step of a run that waits for its script's approval, nor of an idempotent start", async () => {
    expect(await echoTwice(eager, toolsets.eager, 20, { approve: true })).toBe(1);
    expect(await echoTwice(eager, toolsets.eager, 30, { headers: { "Idempotency-Key": `keyed-${Date.now()}` } })).toBe(
      1,
    );
  });

  it("uses an end user's credentials written just before a run whose step was carried, though one was read a moment earlier", async () => {
    const user = `late-${Date.now()}`;
    const send = async (message: string) => {
      const { body } = await eager.request("POST", "/v1/runs", {
        script: `import { svc } from "rewind:tools";\nexport default async () => svc.echo({ message: "${message}" });`,
        toolset: toolsets.eager,
        endUser: user,
      });
      expect((await waitForRun(eager, String(body.id))).status).toBe("completed");
    };
    await send("before the write");
    const written = await eager.request("PUT", `/v1/end-users/${user}/toolsets/${toolsets.eager}/credentials`, {
      mcpServers: { svc: { headers: { authorization: "Bearer own-of-late" } } },
    });
    expect(written.status).toBe(200);
    await send("after the write");
    const sent = (message: string) =>
      server.calls.find((call) => call.arguments["message"] === message)?.headers["authorization"] ?? null;
    expect(sent("before the write")).toBeNull();
    expect(sent("after the write")).toBe("Bearer own-of-late");
  });

  it("fails a run whose script throws in its carried first step, as it would in a local activity", async () => {
    const { body } = await eager.request("POST", "/v1/runs", {
      script: 'export default async () => { throw new Error("no good"); }',
    });
    const run = await waitForRun(eager, String(body.id));
    expect(run.status).toBe("failed");
    expect(JSON.stringify(run.error)).toContain("no good");
    expect(localActivities(await historyOf(eager, String(body.id)))).toBe(0);
  });

  it("leaves a carried first step out of the input of the executions a run continues as", async () => {
    const stack = await startRewindStack({ eagerStart: true, env: { REWIND_CONTINUE_AS_NEW_EVENTS: "50" } });
    try {
      const script = [
        'import { sleep } from "rewind:tools";',
        "export default async function main() {",
        "  for (let i = 0; i < 14; i++) await sleep(5);",
        '  return "slept";',
        "}",
      ].join("\n");
      const started = await stack.request("POST", "/v1/runs", { script });
      const id = String(started.body["id"]);
      const done = await waitForRun(stack, id, 60_000);
      expect(done.status, JSON.stringify(done.error)).toBe("completed");
      const executions: { runId: string; input: RunInput | undefined }[] = [];
      for await (const execution of stack.client.workflow.list({ query: `WorkflowId = '${id}'` }))
        executions.push({ runId: execution.runId, input: await readRunStart(stack.client, id, execution.runId) });
      expect(executions.length).toBeGreaterThan(1);
      const first = executions.filter(({ input }) => input?.carried === undefined);
      const continued = executions.filter(({ input }) => input?.carried !== undefined);
      expect(first).toHaveLength(1);
      expect(first[0]?.input?.firstStep?.kind).toBe("waiting");
      expect(continued.length).toBeGreaterThan(0);
      expect(continued.every(({ input }) => input?.firstStep === undefined)).toBe(true);
    } finally {
      await stack.stop();
    }
  }, 90_000);
});
