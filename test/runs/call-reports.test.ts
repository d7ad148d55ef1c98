/**
 * Call reports end to end, driven as the MCP activity will drive them: a run's call goes to a
 * tool that blocks until the test lets it finish, and meanwhile the test uses CallReports against
 * that run, with the call's namespace, run id and seq, as the activity will. Progress reaches the
 * journal and `rewind runs watch`; a request for input parks the run (event call.input_requested),
 * the harness's answer is checked against the requested schema and reaches the waiting attempt;
 * a request no one may answer any more (withdrawn, its call ended, its run cancelled) ends the
 * wait promptly and answers 409.
 */
import { randomUUID } from "node:crypto";
import { WorkflowUpdateFailedError } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createCallReports,
  InputRequestClosedError,
  type CallRef,
  type CallReports,
} from "../../src/activities/call-reports.ts";
import type { JournalEntryBody, RunViewBody } from "../../src/contract/response-schemas.ts";
import { createCallTracker } from "../../src/cli/call-tracker.ts";
import { answerCallInputUpdate } from "../../src/workflows/run/messages.ts";
import { startEventReceiver, type EventReceiver } from "../helpers/event-receiver.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { gateTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

const KEY = `reports-${randomUUID()}`;
const NAMESPACE = `reports-${randomUUID().slice(0, 8)}`;
const auth = { authorization: `Bearer ${KEY}` };

let stack: RewindStack;
let server: TestMcpServer;
let receiver: EventReceiver;
let toolset: string;
let reports: CallReports;

const gate = gateTool("sync");

const SCRIPT = `import { tickets } from "rewind:tools";
export default async function main() {
  return await tickets.sync({});
}`;

const SCHEMA = {
  type: "object",
  properties: { project: { type: "string" }, count: { type: "integer", minimum: 1 } },
  required: ["project"],
};

beforeAll(async () => {
  stack = await startRewindStack({ env: { REWIND_API_KEYS: `${KEY}:${NAMESPACE}` } });
  server = await startMcpServer({ tools: [gate.tool] });
  receiver = await startEventReceiver();
  const endpoint = await request("PUT", "/v1/events/endpoint", { url: receiver.url });
  receiver.setSecret(String(endpoint.body["secret"]));
  const registered = await request("POST", "/v1/toolsets", { mcpServers: { tickets: { url: server.url } } });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  toolset = String(registered.body.id);
  reports = createCallReports(stack.client, { pollEveryMs: 200 });
  // No wait for the workers to learn the endpoint: none has asked for this new namespace's yet, so
  // none holds an answer from before it was set.
});
afterAll(async () => {
  gate.releaseAll();
  await stack?.stop();
  await server?.close();
  await receiver?.close();
});

function request(method: string, route: string, body?: unknown) {
  return stack.request(method, route, body, auth);
}

async function journalEntry(id: string): Promise<JournalEntryBody | undefined> {
  const { body } = await request("GET", `/v1/runs/${id}/journal`);
  return (body["entries"] as JournalEntryBody[] | undefined)?.[0];
}

/** Starts a run and waits until its call is at the tool: answers the call as the activity knows it. */
async function startBlockedRun(): Promise<{ id: string; call: CallRef }> {
  const started = await request("POST", "/v1/runs", { toolset, script: SCRIPT });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const id = String(started.body.id);
  await waitFor("the call to reach the tool", async () => (gate.holds(id) ? true : undefined));
  return { id, call: { namespace: NAMESPACE, runId: id, seq: 1, attempt: 1 } };
}

async function waitStatus(id: string, status: string): Promise<ApiBody> {
  return waitFor(`run ${id} to be ${status}`, async () => {
    const { body } = await request("GET", `/v1/runs/${id}`);
    return body.status === status ? body : undefined;
  });
}

const answer = (id: string, seq: number, body: unknown) =>
  request("POST", `/v1/runs/${id}/calls/${seq}/elicitation`, body);

describe("call reports", () => {
  it("puts the latest progress on the call's journal entry, coalesced, and shows it in watch", async () => {
    const { id, call } = await startBlockedRun();
    reports.progress(call, { progress: 10, total: 100, message: "starting" });
    reports.progress(call, { progress: 25, total: 100 });
    reports.progress(call, { progress: 40, total: 100, message: "indexing…" });
    const entry = await waitFor("progress 40", async () => {
      const e = await journalEntry(id);
      return e?.progress?.progress === 40 ? e : undefined;
    });
    expect(entry).toMatchObject({
      status: "running",
      progress: { progress: 40, total: 100, message: "indexing…", attempt: 1 },
    });
    // A report for another namespace, or for a call the run never made, changes nothing.
    reports.progress({ ...call, namespace: "someone-else" }, { progress: 99 });
    reports.progress({ ...call, seq: 7 }, { progress: 99 });
    // Not a wait for something to happen: the period (several of the reports' 200 ms polls) in
    // which the ignored reports must change nothing.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await journalEntry(id))?.progress?.progress).toBe(40);

    const run = (await request("GET", `/v1/runs/${id}`)).body as RunViewBody;
    const tracker = createCallTracker(id, (words) => `rewind ${words}`);
    expect(tracker.update([entry], run)).toEqual(["→ 1 tickets.sync({})", "⋯ call 1 tickets.sync 40/100 indexing…"]);
    expect(tracker.update([entry], run)).toEqual([]);

    gate.release(id);
    const done = await waitForRun(stack, id, 30_000, auth);
    expect(done.status).toBe("completed");
    // Progress that arrives after the call ended is ignored; the last one stays on record.
    reports.progress(call, { progress: 100, total: 100 });
    // Not a wait for something to happen: the period in which the late report must change nothing.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await journalEntry(id)).toMatchObject({ status: "completed", progress: { progress: 40 } });
  });

  it("parks the run on a request for input, checks the answer against the schema, and hands it to the waiting attempt", async () => {
    const { id, call } = await startBlockedRun();
    expect((await answer(id, 1, { action: "decline" })).status, "a call that asked nothing").toBe(409);

    const asked = reports.askInput(
      call,
      { message: "Which project?", requestedSchema: SCHEMA },
      new AbortController().signal,
    );
    const parked = await waitStatus(id, "parked");
    expect(parked["parked"]).toEqual([
      {
        seq: 1,
        tool: "tickets.sync",
        args: {},
        reason: "elicitationRequested",
        details: { requestId: expect.any(String), attempt: 1, message: "Which project?", requestedSchema: SCHEMA },
      },
    ]);
    const event = await receiver.waitFor(id, "call.input_requested");
    expect(event.data).toEqual({ seq: 1, tool: "tickets.sync", message: "Which project?", requestedSchema: SCHEMA });
    const entry = await journalEntry(id);
    expect(entry).toMatchObject({
      status: "parked",
      inputs: [{ message: "Which project?", attempt: 1, requestedSchema: SCHEMA }],
    });
    expect(entry?.inputs?.[0]?.outcome).toBeUndefined();

    // Watch shows the question with the command that answers it.
    const lines = createCallTracker(id, (words) => `rewind ${words}`).update(
      entry ? [entry] : [],
      parked as RunViewBody,
    );
    expect(lines).toContain("? 1 tickets.sync asks: Which project?");
    expect(lines).toContain(`    answer: rewind runs answer ${id} 1 --accept '{…}' | --decline | --cancel`);
    expect(lines.some((line) => line.includes("approve"))).toBe(false);

    // It waits for data, not a decision; answers that don't fit are refused.
    expect((await request("POST", `/v1/runs/${id}/calls/1/approve`)).status).toBe(409);
    const misfit = await answer(id, 1, { action: "accept", content: { count: 0 } });
    expect(misfit.status).toBe(422);
    expect(misfit.body.error).toMatchObject({ code: "invalidAnswer" });
    // What is wrong is the answer's content, named as such (not the call's arguments).
    expect(misfit.body.error?.message).toMatch(/^the content does not fit the schema call 1 asked for: content /);
    expect(misfit.body.error?.message).not.toContain("arguments");
    expect(JSON.stringify(misfit.body.error?.details)).toContain("project");
    expect((await answer(id, 1, { action: "maybe" })).status).toBe(400);
    expect((await answer(id, 1, { action: "accept" })).status).toBe(400);
    expect((await answer(id, 2, { action: "decline" })).status, "a call the run never made").toBe(404);
    expect((await answer("run_00000000000000000000000000", 1, { action: "decline" })).status).toBe(404);
    // An answer to a request other than the one the call waits on is refused by the run itself.
    await expect(
      stack.client.workflow
        .getHandle(id)
        .executeUpdate(answerCallInputUpdate, { args: [{ seq: 1, requestId: "stale", answer: { action: "cancel" } }] }),
    ).rejects.toBeInstanceOf(WorkflowUpdateFailedError);

    const accepted = await answer(id, 1, { action: "accept", content: { project: "rewind", count: 3 } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect(accepted.body).toEqual({ seq: 1 });
    await expect(asked).resolves.toEqual({ action: "accept", content: { project: "rewind", count: 3 } });
    expect((await request("GET", `/v1/runs/${id}`)).body.status).toBe("running");
    expect((await answer(id, 1, { action: "decline" })).status, "a second answer").toBe(409);
    expect(await journalEntry(id)).toMatchObject({
      status: "running",
      inputs: [{ outcome: "accept", content: { project: "rewind", count: 3 } }],
    });

    // The same call may ask again; decline and cancel carry no content.
    for (const action of ["decline", "cancel"] as const) {
      const again = reports.askInput(
        call,
        { message: `Sure (${action})?`, requestedSchema: SCHEMA },
        new AbortController().signal,
      );
      await waitStatus(id, "parked");
      expect((await answer(id, 1, { action })).status).toBe(200);
      await expect(again).resolves.toEqual({ action });
    }
    expect((await journalEntry(id))?.inputs?.map((input) => input.outcome)).toEqual(["accept", "decline", "cancel"]);

    gate.release(id);
    expect((await waitForRun(stack, id, 30_000, auth)).result).toEqual({ released: id });
    expect((await answer(id, 1, { action: "decline" })).status, "a finished run").toBe(409);
  });

  it("withdraws the request when the attempt's signal aborts: the wait ends at once and the run runs again", async () => {
    const { id, call } = await startBlockedRun();
    const abort = new AbortController();
    const asked = reports.askInput(
      call,
      { message: "Go on?", requestedSchema: { type: "object", properties: {} } },
      abort.signal,
    );
    await waitStatus(id, "parked");
    const reason = new Error("the attempt timed out");
    abort.abort(reason);
    await expect(asked).rejects.toBe(reason);
    await waitStatus(id, "running");
    expect((await journalEntry(id))?.inputs?.[0]?.outcome).toBe("withdrawn");
    expect((await answer(id, 1, { action: "cancel" })).status).toBe(409);
    // A signal that aborted already asks nothing.
    await expect(reports.askInput(call, { message: "?", requestedSchema: {} }, AbortSignal.abort(reason))).rejects.toBe(
      reason,
    );
    gate.release(id);
    expect((await waitForRun(stack, id, 30_000, auth)).status).toBe("completed");
  });

  it("ends the wait when the call ends while it is parked for input, and leaves the entry in its final state", async () => {
    const { id, call } = await startBlockedRun();
    const asked = reports.askInput(
      call,
      { message: "Still there?", requestedSchema: { type: "object" } },
      new AbortController().signal,
    );
    await waitStatus(id, "parked");
    gate.release(id);
    await expect(asked).rejects.toBeInstanceOf(InputRequestClosedError);
    const done = await waitForRun(stack, id, 30_000, auth);
    expect(done.status).toBe("completed");
    expect(await journalEntry(id)).toMatchObject({ status: "completed", inputs: [{ outcome: "withdrawn" }] });
    expect((await answer(id, 1, { action: "cancel" })).status).toBe(409);
  });

  it("ends the wait promptly when the run is cancelled while its call waits for input", async () => {
    const { id, call } = await startBlockedRun();
    // Its end is awaited below, after other waits: caught now, so an early end is this test's
    // failure (with its reason), not an unhandled rejection of the suite.
    const asked = reports
      .askInput(call, { message: "Really?", requestedSchema: { type: "object" } }, new AbortController().signal)
      .then(
        () => "answered",
        (error: unknown) => error,
      );
    await waitStatus(id, "parked");
    const cancelledAt = Date.now();
    expect((await request("POST", `/v1/runs/${id}/cancel`)).status).toBe(200);
    expect(await asked).toBeInstanceOf(InputRequestClosedError);
    expect(Date.now() - cancelledAt).toBeLessThan(5_000);
    expect((await waitForRun(stack, id, 30_000, auth)).status).toBe("cancelled");
    expect((await answer(id, 1, { action: "cancel" })).status).toBe(409);
  });

  it("refuses to park a call that is not in flight, or of a run that ended", async () => {
    const { id, call } = await startBlockedRun();
    const never = reports.askInput(
      { ...call, seq: 7 },
      { message: "Who?", requestedSchema: {} },
      new AbortController().signal,
    );
    await expect(never).rejects.toBeInstanceOf(InputRequestClosedError);
    const other = reports.askInput(
      { ...call, namespace: "someone-else" },
      { message: "Who?", requestedSchema: {} },
      new AbortController().signal,
    );
    await expect(other).rejects.toBeInstanceOf(InputRequestClosedError);
    expect((await request("GET", `/v1/runs/${id}`)).body.status).toBe("running");
    gate.release(id);
    await waitForRun(stack, id, 30_000, auth);
    await expect(
      reports.askInput(call, { message: "Late?", requestedSchema: {} }, new AbortController().signal),
    ).rejects.toBeInstanceOf(InputRequestClosedError);
  });
});
