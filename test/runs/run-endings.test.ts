/**
 * Every way a run ends goes one way: a cancelled run says so in its status, its search
 * attribute and a run.cancelled event; a child run that is cancelled, fails or is terminated
 * ends its parent's wait with ToolError(childFailed) naming how it ended, and the parent's
 * script goes on; cancelling a parent cancels the children it was waiting for.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SEARCH_ATTRIBUTES } from "../../src/shared/run.ts";
import { startEventReceiver, type EventReceiver } from "../helpers/event-receiver.ts";
import { startRewindStack, waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

const key = `endings-key-${randomUUID()}`;
const auth = { authorization: `Bearer ${key}` };
let stack: RewindStack;
let receiver: EventReceiver;
let toolset: string;

const request = (method: string, route: string, body?: unknown) => stack.request(method, route, body, auth);

beforeAll(async () => {
  stack = await startRewindStack({ env: { REWIND_API_KEYS: `${key}:endings-${randomUUID().slice(0, 8)}` } });
  receiver = await startEventReceiver();
  receiver.setSecret(String((await request("PUT", "/v1/events/endpoint", { url: receiver.url })).body["secret"]));
  const store = async (name: string, script: string) => {
    const { status, body } = await request("POST", "/v1/workflows", { name, script });
    expect(status, JSON.stringify(body)).toBe(201);
    return String(body.id);
  };
  const waiter = await store(
    "waiter",
    'import { waitForSignal } from "rewind:tools";\nexport default async () => await waitForSignal<string>("go");',
  );
  const thrower = await store("thrower", 'export default async () => { throw new Error("the child broke"); };');
  const registered = await request("POST", "/v1/toolsets", { workflows: { waiter, thrower } });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  toolset = String(registered.body.id);
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

async function start(script: string): Promise<string> {
  const { status, body } = await request("POST", "/v1/runs", { toolset, script });
  expect(status, JSON.stringify(body)).toBe(201);
  return String(body.id);
}

function childOf(parent: string): Promise<string> {
  return waitFor(`run ${parent} to await a child`, async () => {
    const { body } = await request("GET", `/v1/runs/${parent}/journal`);
    const started = ((body["entries"] ?? []) as { tool: string; status: string; result?: { runId: string } }[]).find(
      (e) => e.tool === "rewind.workflows.start" && e.status === "completed",
    );
    const waiting = ((body["entries"] ?? []) as { tool: string }[]).some((e) => e.tool === "rewind.workflows.result");
    return started?.result && waiting ? started.result.runId : undefined;
  });
}

const AWAIT_CHILD = (workflow: string) => `import { workflows, ToolError } from "rewind:tools";
export default async function main() {
  const child = await workflows.${workflow}.start();
  try {
    return { ok: await child.result() };
  } catch (e) {
    if (!(e instanceof ToolError)) throw e;
    const details = e.details as { status: string; runId: string };
    return { code: e.code, status: details.status, sameChild: details.runId === child.runId, message: e.message };
  }
}`;

async function statusAttribute(id: string): Promise<unknown> {
  const described = await stack.client.workflow.getHandle(id).describe();
  return described.typedSearchAttributes.get(SEARCH_ATTRIBUTES.status);
}

describe("how runs end", () => {
  it("ends a parent's wait with childFailed when the child is cancelled, and the parent goes on", async () => {
    const parent = await start(AWAIT_CHILD("waiter"));
    const child = await childOf(parent);
    expect((await request("POST", `/v1/runs/${child}/cancel`)).status).toBe(200);
    const done = await waitForRun(stack, parent, 30_000, auth);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toMatchObject({ code: "childFailed", status: "cancelled", sameChild: true });
  });

  it("ends a parent's wait with childFailed when the child fails, with the child's error", async () => {
    const parent = await start(AWAIT_CHILD("thrower"));
    const done = await waitForRun(stack, parent, 30_000, auth);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toMatchObject({ code: "childFailed", status: "failed", sameChild: true });
    expect(String((done.result as { message: string }).message)).toContain("the child broke");
  });

  it("ends a parent's wait with childFailed when the child is terminated", async () => {
    const parent = await start(AWAIT_CHILD("waiter"));
    const child = await childOf(parent);
    await stack.client.workflow.getHandle(child).terminate("an operator stopped it");
    const done = await waitForRun(stack, parent, 30_000, auth);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toMatchObject({ code: "childFailed", status: "terminated", sameChild: true });
  });

  it("marks a cancelled run cancelled (status, search attribute, run.cancelled) and cancels the child it awaited", async () => {
    const parent = await start(AWAIT_CHILD("waiter"));
    const child = await childOf(parent);
    expect((await request("GET", `/v1/runs/${parent}`)).body.status).toBe("running");
    expect((await request("POST", `/v1/runs/${parent}/cancel`)).status).toBe(200);
    const done: ApiBody = await waitForRun(stack, parent, 30_000, auth);
    expect(done.status).toBe("cancelled");
    const event = await receiver.waitFor(parent, "run.cancelled", 15_000);
    expect(event.runId).toBe(parent);
    expect(await statusAttribute(parent)).toBe("cancelled");
    // The child it was waiting for is cancelled too, and says so itself.
    expect((await waitForRun(stack, child, 30_000, auth)).status).toBe("cancelled");
    expect(await statusAttribute(child)).toBe("cancelled");
    await receiver.waitFor(child, "run.cancelled", 15_000);
  });

  it("cancels a run waiting for a signal and marks it cancelled", async () => {
    const parent = await start(
      'import { waitForSignal } from "rewind:tools";\nexport default async () => await waitForSignal("never");',
    );
    await waitFor(
      `run ${parent}'s journal`,
      async () => (await request("GET", `/v1/runs/${parent}/journal`)).body["entries"],
    );
    expect((await request("POST", `/v1/runs/${parent}/cancel`)).status).toBe(200);
    expect((await waitForRun(stack, parent, 30_000, auth)).status).toBe("cancelled");
    expect(await statusAttribute(parent)).toBe("cancelled");
  });
});
