/**
 * Events to the harness: Standard Webhooks signed with the namespace's secret, verified here
 * with the `standardwebhooks` package; an endpoint that is down for a while still receives
 * every event once it is back, each accepted exactly once by webhook-id.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { WorkflowNotFoundError } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventId, type EventType } from "../../src/shared/events.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { effectCounterTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

interface Received {
  id: string;
  type: string;
  runId: string;
  data: Record<string, unknown>;
}

let stack: RewindStack;
let server: TestMcpServer;
let receiver: http.Server;
let receiverUrl: string;
let secret = "";
let downUntil = 0;
const accepted: Received[] = [];
let refusedAttempts = 0;
let badSignatures = 0;
const key = `events-key-${randomUUID()}`;
const auth = { authorization: `Bearer ${key}` };
/** A second namespace that never sets an endpoint. */
const quietKey = `quiet-key-${randomUUID()}`;
const quiet = { authorization: `Bearer ${quietKey}` };

beforeAll(async () => {
  stack = await startRewindStack({
    env: { REWIND_API_KEYS: `${key}:events-${randomUUID().slice(0, 8)},${quietKey}:quiet-${randomUUID().slice(0, 8)}` },
  });
  server = await startMcpServer({ tools: [effectCounterTool({ name: "pay" }).tool] });
  receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on("end", () => {
      if (Date.now() < downUntil) {
        refusedAttempts++;
        res.writeHead(503).end();
        return;
      }
      try {
        const event = new Webhook(secret).verify(body, req.headers as Record<string, string>) as Received;
        if (!accepted.some((e) => e.id === event.id)) accepted.push(event);
        else accepted.push({ ...event, type: `duplicate:${event.type}` });
        res.writeHead(204).end();
      } catch {
        badSignatures++;
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", () => resolve()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

/** The events accepted for `runId`, once there are at least `count`. */
function eventsOf(runId: string, count: number, timeoutMs = 30_000): Promise<Received[]> {
  return waitFor(`${count} events for ${runId}`, () => accepted.filter((e) => e.runId === runId), {
    timeoutMs,
    until: (events) => events.length >= count,
  });
}

async function deliveryWorkflowExists(runId: string, type: EventType): Promise<boolean> {
  try {
    await stack.client.workflow.getHandle(`event/${eventId(runId, type)}`).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

describe("events", () => {
  it("starts no delivery workflow for the end of a run while the namespace has no endpoint", async () => {
    const done = await stack.request("POST", "/v1/runs", { script: "export default async () => 1;" }, quiet);
    const failed = await stack.request(
      "POST",
      "/v1/runs",
      { script: 'export default async () => { throw new Error("x"); };' },
      quiet,
    );
    expect((await waitForRun(stack, String(done.body.id), undefined, quiet)).status).toBe("completed");
    expect((await waitForRun(stack, String(failed.body.id), undefined, quiet)).status).toBe("failed");
    expect(await deliveryWorkflowExists(String(done.body.id), "run.completed")).toBe(false);
    expect(await deliveryWorkflowExists(String(failed.body.id), "run.failed")).toBe(false);
  });

  it("stores the endpoint, generates a secret when none is given, and never shows it again", async () => {
    expect((await stack.request("PUT", "/v1/events/endpoint", { url: "ftp://nope" }, auth)).status).toBe(400);
    expect(
      (await stack.request("PUT", "/v1/events/endpoint", { url: receiverUrl, secret: "plain" }, auth)).status,
    ).toBe(400);
    const set = await stack.request("PUT", "/v1/events/endpoint", { url: receiverUrl }, auth);
    expect(set.status).toBe(200);
    secret = String(set.body["secret"]);
    expect(secret).toMatch(/^whsec_/);
    const read = await stack.request("GET", "/v1/events/endpoint", undefined, auth);
    expect(read.body).toEqual({ url: receiverUrl });
  });

  it("sends signed call.approval_requested and run.completed events, and run.failed", async () => {
    const toolset = await stack.request(
      "POST",
      "/v1/toolsets",
      { mcpServers: { bank: { url: server.url } }, policies: { "bank.pay": { approval: true } } },
      auth,
    );
    const started = await stack.request(
      "POST",
      "/v1/runs",
      {
        toolset: toolset.body.id,
        script:
          'import { bank } from "rewind:tools";\nexport default async () => { await bank.pay({ label: "rent" }); return "paid"; };',
      },
      auth,
    );
    const id = String(started.body.id);
    const [requested] = await eventsOf(id, 1);
    expect(requested).toMatchObject({
      type: "call.approval_requested",
      runId: id,
      data: { seq: 1, tool: "bank.pay", args: { label: "rent" } },
    });
    expect((await stack.request("POST", `/v1/runs/${id}/calls/1/approve`, undefined, auth)).status).toBe(200);
    const events = await eventsOf(id, 2);
    expect(events.map((e) => e.type)).toEqual(["call.approval_requested", "run.completed"]);
    expect(events[1]?.data).toEqual({ result: "paid" });
    expect(await deliveryWorkflowExists(id, "run.completed")).toBe(true);

    const failing = await stack.request(
      "POST",
      "/v1/runs",
      { script: 'export default async () => { throw new Error("nope"); };' },
      auth,
    );
    const [failed] = await eventsOf(String(failing.body.id), 1);
    expect(failed).toMatchObject({
      type: "run.failed",
      data: { error: { type: "ScriptFailed", message: "Error: nope" } },
    });
    expect(badSignatures).toBe(0);
  });

  it("delivers every event, exactly once each, to an endpoint that was down for a while", async () => {
    downUntil = Date.now() + 4_000;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const started = await stack.request("POST", "/v1/runs", { script: `export default async () => ${i};` }, auth);
      ids.push(String(started.body.id));
    }
    for (const id of ids) expect((await waitForRun(stack, id, undefined, auth)).status).toBe("completed");
    for (const id of ids) expect((await eventsOf(id, 1, 40_000)).map((e) => e.type)).toEqual(["run.completed"]);
    expect(refusedAttempts).toBeGreaterThan(0);
    expect(accepted.filter((e) => e.type.startsWith("duplicate:"))).toEqual([]);
  }, 60_000);
});
