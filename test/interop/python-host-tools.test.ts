/**
 * Host tools served by a worker written with Temporal's Python SDK (examples/python-host-tools/),
 * with no Rewind code on its side: the activity contract of docs/host-tools.md is enough. A run
 * gets a Python tool's result and the tool sees `<run_id>/<seq>`, its attempt and the call's
 * traceparent; a ToolError raised in Python as a HostToolError reaches the script with its code,
 * message and details, unretried; an ordinary exception is an interruption, retried with the same
 * key; the example's script.ts type-checks and runs; and cancelling the run reaches a tool that
 * heartbeats. The toolset registered is the example's own toolset.json, on a task queue of this
 * file's.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXAMPLE_DIR, startPythonHostWorker, type PythonHostWorker } from "../helpers/python-host-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
let python: PythonHostWorker;
let toolset: string;
const taskQueue = `python-harness-${randomUUID()}`;

beforeAll(async () => {
  stack = await startRewindStack();
  python = await startPythonHostWorker({ address: stack.address, taskQueue });
  const document = JSON.parse(await readFile(path.join(EXAMPLE_DIR, "toolset.json"), "utf8")) as {
    hostTools: { orders: { taskQueue: string } };
  };
  document.hostTools.orders.taskQueue = taskQueue;
  toolset = await registerToolset(stack, document);
});
afterAll(async () => {
  await python?.stop();
  await stack?.stop();
});

const script = (body: string) =>
  `import { orders, ToolError } from "rewind:tools";\nexport default async function main() {\n${body}\n}`;

/** The attempts the Python worker printed for one call. */
const attemptsOf = (key: string) => python.events.filter((event) => event.event === "attempt" && event.key === key);

async function journalEntry(id: string, seq: number): Promise<Record<string, unknown>> {
  const { status, body } = await stack.request("GET", `/v1/runs/${id}/journal`);
  expect(status).toBe(200);
  const entries = (body["entries"] ?? []) as Record<string, unknown>[];
  const entry = entries.find((e) => e["seq"] === seq);
  expect(entry, JSON.stringify(body)).toBeDefined();
  return entry ?? {};
}

describe("host tools served with Temporal's Python SDK", () => {
  it("returns the tool's result; the tool saw <run_id>/<seq>, its attempt and the call's traceparent", async () => {
    const traceId = randomBytes(16).toString("hex");
    const { status, body } = await stack.request(
      "POST",
      "/v1/runs",
      {
        toolset,
        script: script(
          '  const lamp = await orders.create_order({ item: "lamp", quantity: 2 });\n' +
            '  const desk = await orders.create_order({ item: "desk", quantity: 1 });\n' +
            "  return [lamp, desk];",
        ),
      },
      { traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01` },
    );
    expect(status, JSON.stringify(body)).toBe(201);
    const id = String(body.id);
    const done = await waitForRun(stack, id);
    expect(done.status, JSON.stringify(done)).toBe("completed");
    expect(done.result).toEqual([
      {
        orderId: expect.stringMatching(/^order-\d+$/),
        item: "lamp",
        quantity: 2,
        idempotencyKey: `${id}/1`,
        attempt: 1,
      },
      {
        orderId: expect.stringMatching(/^order-\d+$/),
        item: "desk",
        quantity: 1,
        idempotencyKey: `${id}/2`,
        attempt: 1,
      },
    ]);
    const [first, second] = [attemptsOf(`${id}/1`), attemptsOf(`${id}/2`)];
    expect(first.map((e) => [e.tool, e.attempt, e["args"]])).toEqual([
      ["orders.create_order", 1, { item: "lamp", quantity: 2 }],
    ]);
    expect(second.map((e) => [e.tool, e.attempt])).toEqual([["orders.create_order", 1]]);
    // Each call is a span of the caller's trace, and the tool is told which.
    const spanOf = (traceparent: unknown) =>
      new RegExp(`^00-${traceId}-([0-9a-f]{16})-01$`).exec(String(traceparent))?.[1];
    expect(spanOf(first[0]?.traceparent), String(first[0]?.traceparent)).toBeDefined();
    expect(spanOf(second[0]?.traceparent)).toBeDefined();
    expect(spanOf(first[0]?.traceparent)).not.toBe(spanOf(second[0]?.traceparent));
  });

  it("gives the script a ToolError raised in Python, with its code, message and details, unretried", async () => {
    const id = await startRun(stack, {
      toolset,
      script: script(
        '  try { await orders.find_customer({ email: "nobody@example.com" }); return "found"; }\n' +
          "  catch (e) { return e instanceof ToolError ? { code: e.code, message: e.message, details: e.details, tool: e.tool, seq: e.seq } : String(e); }",
      ),
    });
    const done = await waitForRun(stack, id);
    expect(done.result).toEqual({
      code: "toolFailed",
      message: "no customer with that email",
      details: { email: "nobody@example.com" },
      tool: "orders.find_customer",
      seq: 1,
    });
    expect(attemptsOf(`${id}/1`).map((e) => e.attempt)).toEqual([1]);
    const entry = await journalEntry(id, 1);
    expect(entry["status"]).toBe("failed");
    expect(entry["attempts"]).toBe(1);
    expect(entry["error"]).toMatchObject({ code: "toolFailed", message: "no customer with that email" });
  });

  it("retries an ordinary exception as an interruption, with the same key; attempt 2 answers", async () => {
    const id = await startRun(stack, { toolset, script: script('  return orders.fetch_quote({ item: "lamp" });') });
    const done = await waitForRun(stack, id);
    expect(done.result).toEqual({ item: "lamp", price: 12.5, attempt: 2 });
    expect(attemptsOf(`${id}/1`).map((e) => e.attempt)).toEqual([1, 2]);
    // The history keeps the retry: the attempt that answered, and why the one before it failed.
    const history = await stack.client.workflow.getHandle(id).fetchHistory();
    const started = (history.events ?? [])
      .map((event) => event.activityTaskStartedEventAttributes)
      .filter((attributes) => attributes !== null && attributes !== undefined);
    expect(started.map((attributes) => attributes.attempt)).toEqual([2]);
    expect(started[0]?.lastFailure?.message).toBe("the pricing service dropped the connection");
    expect(started[0]?.lastFailure?.applicationFailureInfo?.type).toBe("ConnectionError");
    expect(await journalEntry(id, 1)).toMatchObject({ status: "completed", result: done.result });
  });

  it("runs the example's script.ts with the example's input", async () => {
    const id = await startRun(stack, {
      toolset,
      script: await readFile(path.join(EXAMPLE_DIR, "script.ts"), "utf8"),
      input: { item: "lamp", email: "nobody@example.com" },
    });
    const done = await waitForRun(stack, id);
    expect(done.result, JSON.stringify(done)).toEqual({
      price: 12.5,
      quoteAttempt: 2,
      order: expect.stringMatching(/^order-\d+$/),
      key: `${id}/2`,
      customer: "unknown (toolFailed: no customer with that email)",
    });
  });

  it("cancels a heartbeating Python tool when the run is cancelled", async () => {
    const id = await startRun(stack, { toolset, script: script("  return orders.export_orders({ batches: 600 });") });
    await python.waitForEvent("the export to start", (e) => e.event === "attempt" && e.key === `${id}/1`);
    // Its heartbeats reach Temporal, with their details.
    await waitFor(
      "a heartbeat of the export",
      async () => (await stack.client.workflow.getHandle(id).describe()).raw.pendingActivities ?? [],
      { until: (pending) => pending.some((activity) => (activity.heartbeatDetails?.payloads?.length ?? 0) > 0) },
    );
    expect((await stack.request("POST", `/v1/runs/${id}/cancel`)).status).toBe(200);
    const cancelled = await python.waitForEvent(
      "the export to be cancelled",
      (e) => e.event === "cancelled" && e.key === `${id}/1`,
      15_000,
    );
    expect(cancelled.attempt).toBe(1);
    expect((await waitForRun(stack, id)).status).toBe("cancelled");
  });
});
