/**
 * Credentials: resolved per call from the first scope that has any (the run's, the end user's,
 * the toolset's), never merged, injected only into the MCP connection; a 401 parks the call
 * until the credentials are renewed, then it is sent again with the same key; and a canary
 * secret appears nowhere the spec forbids: history, journal, run view, events, the sandbox.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentialsWorkflowId } from "../../src/shared/credentials.ts";
import { startEventReceiver, type EventReceiver } from "../helpers/event-receiver.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { IDEMPOTENCY_KEY, echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { historyText, openedSecretsIn } from "../helpers/secret-search.ts";

const CANARY = `canary-${randomUUID()}`;
const key = `creds-key-${randomUUID()}`;
const namespace = `creds-${randomUUID().slice(0, 8)}`;
const auth = { authorization: `Bearer ${key}` };
let stack: RewindStack;
let open: TestMcpServer;
let guarded: TestMcpServer;
let receiver: EventReceiver;
let openToolset: string;
let guardedToolset: string;

const request = (method: string, route: string, body?: unknown) => stack.request(method, route, body, auth);

beforeAll(async () => {
  stack = await startRewindStack({ env: { REWIND_API_KEYS: `${key}:${namespace}` } });
  open = await startMcpServer({ tools: [echoTool("whoami")] });
  guarded = await startMcpServer({ tools: [echoTool("whoami")], requiredAuthorization: `Bearer ${CANARY}-fresh` });
  receiver = await startEventReceiver();
  const endpoint = await request("PUT", "/v1/events/endpoint", { url: receiver.url });
  receiver.setSecret(String(endpoint.body["secret"]));
  openToolset = String((await request("POST", "/v1/toolsets", { mcpServers: { svc: { url: open.url } } })).body.id);
  const registered = await request("POST", "/v1/toolsets", {
    mcpServers: { svc: { url: guarded.url } },
    credentials: { mcpServers: { svc: { headers: { authorization: `Bearer ${CANARY}-fresh` } } } },
  });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  expect(JSON.stringify(registered.body)).not.toContain(CANARY);
  guardedToolset = String(registered.body.id);
});
afterAll(async () => {
  await stack?.stop();
  await Promise.all([open?.close(), guarded?.close(), receiver?.close()]);
});

const SCRIPT =
  'import { svc } from "rewind:tools";\nexport default async () => { await svc.whoami({}); return "done"; };';

/** Every history of a workflow id (each run of it), payloads decoded; fails when it has none. */
async function historiesOf(workflowId: string): Promise<string> {
  const histories: string[] = [];
  for await (const execution of stack.client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    histories.push(await historyText(stack.client, workflowId, execution.runId));
  expect(histories.length, `executions of ${workflowId}`).toBeGreaterThan(0);
  return histories.join("\n");
}

async function headersSeenBy(server: TestMcpServer, runId: string) {
  return server.calls
    .filter((c) => c.name === "whoami" && String(c.meta[IDEMPOTENCY_KEY]).startsWith(`${runId}/`))
    .map((c) => c.headers);
}

describe("credentials", () => {
  it("uses the run's own, else the end user's, else the toolset's — never a merge — and returns no secret", async () => {
    const put = await request("PUT", `/v1/toolsets/${openToolset}/credentials`, {
      mcpServers: { svc: { headers: { authorization: "Bearer toolset-token", "x-toolset": "t" } } },
    });
    expect(put.status).toBe(200);
    expect(JSON.stringify(put.body)).not.toContain("toolset-token");
    expect(
      (
        await request("PUT", `/v1/end-users/alice/toolsets/${openToolset}/credentials`, {
          mcpServers: { svc: { headers: { authorization: "Bearer alice-token" } } },
        })
      ).status,
    ).toBe(200);
    expect(
      (await request("PUT", `/v1/toolsets/${openToolset}/credentials`, { mcpServers: { nope: { headers: {} } } }))
        .status,
    ).toBe(400);

    const start = async (extra: Record<string, unknown>) => {
      const started = await request("POST", "/v1/runs", { toolset: openToolset, script: SCRIPT, ...extra });
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      const id = String(started.body.id);
      expect((await waitForRun(stack, id, 30_000, auth)).status).toBe("completed");
      return (await headersSeenBy(open, id))[0] ?? {};
    };
    const own = await start({
      endUser: "alice",
      credentials: { mcpServers: { svc: { headers: { "x-run-only": "run-token" } } } },
    });
    expect(own["x-run-only"]).toBe("run-token");
    expect(own["authorization"]).toBeUndefined();
    expect((await start({ endUser: "alice" }))["authorization"]).toBe("Bearer alice-token");
    const bob = await start({ endUser: "bob" });
    expect(bob["authorization"]).toBe("Bearer toolset-token");
    expect(bob["x-toolset"]).toBe("t");
  });

  it("refuses an end user named with NUL (or out of 1 to 200 characters) at once, wherever an end user is named", async () => {
    // Temporal's visibility can't be queried for a value holding NUL: such a name would be written, never listed or renewed.
    const nul = "a\u0000b";
    const refusals = [
      await request("PUT", `/v1/end-users/${encodeURIComponent(nul)}/toolsets/${openToolset}/credentials`, {
        mcpServers: {},
      }),
      await request("PUT", `/v1/end-users/${"x".repeat(201)}/toolsets/${openToolset}/credentials`, { mcpServers: {} }),
      await request("POST", "/v1/runs", { toolset: openToolset, script: SCRIPT, endUser: nul }),
      await request("GET", `/v1/runs?endUser=${encodeURIComponent(nul)}`),
    ];
    for (const refused of refusals) {
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body["error"]).toMatchObject({ code: "badRequest", message: expect.stringMatching(/end user/) });
    }
    // A name with other control characters is an ordinary name.
    const tabbed = await request(
      "PUT",
      `/v1/end-users/${encodeURIComponent("a\tb")}/toolsets/${openToolset}/credentials`,
      {
        mcpServers: {},
      },
    );
    expect(tabbed.status, JSON.stringify(tabbed.body)).toBe(200);
  });

  it("parks a call on 401, tells the harness, and sends it again with the same key once renewed", async () => {
    await request("PUT", `/v1/toolsets/${guardedToolset}/credentials`, {
      mcpServers: { svc: { headers: { authorization: `Bearer ${CANARY}-stale` } } },
    });
    const started = await request("POST", "/v1/runs", { toolset: guardedToolset, script: SCRIPT });
    const id = String(started.body.id);
    const event = await receiver.waitFor(id, "credentials.expired");
    expect(event.data).toMatchObject({ seq: 1, tool: "svc.whoami", reason: "credentialsExpired", scope: "toolset" });
    const parked = await request("GET", `/v1/runs/${id}`);
    expect(parked.body.status).toBe("parked");
    expect(parked.body["parked"]).toEqual([
      expect.objectContaining({
        seq: 1,
        reason: "credentialsExpired",
        details: expect.objectContaining({ scope: "toolset" }),
      }),
    ]);
    expect((await request("POST", `/v1/runs/${id}/calls/2/resume`)).status).toBe(409);
    const renewed = await request("PUT", `/v1/toolsets/${guardedToolset}/credentials`, {
      mcpServers: { svc: { headers: { authorization: `Bearer ${CANARY}-fresh` } } },
    });
    expect(renewed.status).toBe(200);
    const done = await waitForRun(stack, id, 30_000, auth);
    expect(done.status, JSON.stringify(done)).toBe("completed");
    const sent = guarded.calls.filter(
      (c) => c.name === "whoami" && String(c.meta[IDEMPOTENCY_KEY]).startsWith(`${id}/`),
    );
    expect(sent.map((c) => c.meta[IDEMPOTENCY_KEY])).toEqual([`${id}/1`]);
    // The journal counts every send: the one the server refused with 401, and the one after renewal.
    const entries = (await request("GET", `/v1/runs/${id}/journal`)).body["entries"] as { attempts?: number }[];
    expect(entries[0]?.attempts).toBe(2);

    // The canary is nowhere a secret must not be.
    // Payloads decoded (JSON.stringify would write their bytes as numbers and find nothing).
    // Each history is first shown to hold what it should, so a search of an empty one can't pass.
    const credentialsId = credentialsWorkflowId(namespace, guardedToolset);
    const runHistory = await historiesOf(id);
    const credentialsHistory = await historiesOf(credentialsId);
    expect(runHistory).toContain("svc.whoami");
    // The toolset's credentials are in their workflow's history, sealed: both canaries open out of it.
    const opened = openedSecretsIn(credentialsHistory).join("\n");
    expect(opened).toContain(`Bearer ${CANARY}-stale`);
    expect(opened).toContain(`Bearer ${CANARY}-fresh`);
    const journal = await request("GET", `/v1/runs/${id}/journal`);
    expect(JSON.stringify(journal.body)).toContain("svc.whoami");
    expect(receiver.bodies.length).toBeGreaterThan(0);
    for (const text of [
      runHistory,
      credentialsHistory,
      JSON.stringify(journal.body),
      JSON.stringify(done),
      ...receiver.bodies,
    ]) {
      expect(text).not.toContain(CANARY);
    }
  }, 60_000);

  it("keeps the run's own credentials sealed in Temporal and out of the sandbox's reach", async () => {
    const started = await request("POST", "/v1/runs", {
      toolset: openToolset,
      credentials: { mcpServers: { svc: { headers: { authorization: `Bearer ${CANARY}-own` } } } },
      script:
        'import { svc } from "rewind:tools";\nexport default async () => { const seen = JSON.stringify(Object.getOwnPropertyNames(globalThis)) + JSON.stringify(svc); await svc.whoami({}); return seen; };',
    });
    const id = String(started.body.id);
    const done = await waitForRun(stack, id, 30_000, auth);
    expect(done.status).toBe("completed");
    expect(String(done.result)).not.toContain(CANARY);
    expect((await headersSeenBy(open, id))[0]?.["authorization"]).toBe(`Bearer ${CANARY}-own`);
    const history = await historiesOf(id);
    expect(history).toContain("whoami");
    // The run's own credentials are in its history, sealed.
    expect(openedSecretsIn(history).join("\n")).toContain(`Bearer ${CANARY}-own`);
    expect(history).not.toContain(CANARY);
  });

  it("parks a 403 insufficient_scope with its own reason and the scope asked for — not as an expiry", async () => {
    const scoped = await startMcpServer({
      tools: [echoTool("admin")],
      intercept: (info) => {
        const body = info.body as { method?: string } | undefined;
        return body?.method === "tools/call"
          ? {
              status: 403,
              headers: { "www-authenticate": 'Bearer error="insufficient_scope", scope="repo:admin"' },
              body: "",
            }
          : undefined;
      },
    });
    try {
      const toolset = String(
        (await request("POST", "/v1/toolsets", { mcpServers: { svc: { url: scoped.url } } })).body.id,
      );
      const started = await request("POST", "/v1/runs", {
        toolset,
        script:
          'import { svc, ToolError } from "rewind:tools";\nexport default async () => { try { await svc.admin({}); return "done"; } catch (e) { return e instanceof ToolError ? e.code : String(e); } };',
      });
      const id = String(started.body.id);
      const event = await receiver.waitFor(id, "credentials.expired");
      expect(event.data).toMatchObject({ seq: 1, reason: "insufficientScope", scopeAsked: "repo:admin" });
      const parked = await request("GET", `/v1/runs/${id}`);
      expect(parked.body["parked"]).toEqual([
        expect.objectContaining({
          reason: "insufficientScope",
          details: expect.objectContaining({ scopeAsked: "repo:admin" }),
        }),
      ]);
      expect((await request("POST", `/v1/runs/${id}/calls/1/reject`, { reason: "not granted" })).status).toBe(200);
      expect((await waitForRun(stack, id, 30_000, auth)).result).toBe("rejected");
    } finally {
      await scoped.close();
    }
  });
});
