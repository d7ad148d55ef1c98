/**
 * Temporal stopped under a running API: every route of the OpenAPI document that needs Temporal
 * answers 503 `unavailable` (and the document says so), the few that do not answer as usual, and
 * once the same server is back on its SQLite file everything works again with nothing lost: the
 * run parked before the outage is still parked on the same call and completes when approved, the
 * toolset is still registered (a fresh API finds it), and no write tried during the outage left
 * anything behind. The routes are read from the document, so a new route fails this test until
 * it has a request here.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startApi } from "../../src/cli/start-api.ts";
import { createWebhookTokens } from "../../src/events/webhook-token.ts";
import { createPrometheusMetrics } from "../../src/metrics/index.ts";
import { createApiClient, RewindApiError } from "../../src/sdk/index.ts";
import { silentLogger, type Logger } from "../../src/shared/logger.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRestartableTemporal, type RestartableTemporal } from "../helpers/restartable-temporal.ts";
import { startRewindStack, waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";
import { TEST_SECRET_KEY } from "../helpers/secret-key.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";

interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
}

interface Request {
  route: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Operations answered without Temporal: the document gives them no 503, and they answer as usual. */
const WITHOUT_TEMPORAL = ["GET /healthz", "GET /openapi.json", "POST /v1/codec/decode", "POST /v1/codec/encode"];

const PARKING_SCRIPT = `import { tools } from "rewind:tools";
export default async () => {
  await tools.echo({ message: "approved after the outage" });
  return "done";
};`;
const QUICK_SCRIPT = "export default async () => 42;";
const UNKNOWN_TOOLSET = `ts_${"0".repeat(64)}`;
const UNKNOWN_WORKFLOW = `wf_${"0".repeat(64)}`;
const MCP_INITIALIZE = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "outage", version: "1" } },
};
const plainPayload = {
  metadata: { encoding: Buffer.from("json/plain").toString("base64") },
  data: Buffer.from("1").toString("base64"),
};

let temporal: RestartableTemporal;
let mcp: TestMcpServer;
let stack: RewindStack;
const warnings: { message: string; fields?: Record<string, unknown> }[] = [];
const errors: string[] = [];
const logger: Logger = {
  ...silentLogger,
  warn: (message, fields) => warnings.push({ message, ...(fields ? { fields } : {}) }),
  error: (message) => errors.push(message),
};

beforeAll(async () => {
  [temporal, mcp] = await Promise.all([startRestartableTemporal(), startMcpServer({ tools: [echoTool()] })]);
  stack = await startRewindStack({ env: { TEMPORAL_ADDRESS: temporal.address }, logger });
});
afterAll(async () => {
  // Temporal first back up (a failed test may leave it stopped), so the worker shuts down cleanly.
  await temporal?.start().catch(() => undefined);
  await stack?.stop();
  await mcp?.close();
  await temporal?.dispose();
});

/** One request or more per operation of the document, keyed `METHOD /path/{param}`. */
function requests(toolset: string, runId: string, outageKey: string): Record<string, Request[]> {
  const run = `/v1/runs/${runId}`;
  const credentials = { mcpServers: { tools: { headers: { "x-token": "during-the-outage" } } } };
  const hookToken = createWebhookTokens(TEST_SECRET_KEY).token(runId, "nudge");
  return {
    "GET /healthz": [{ route: "/healthz" }],
    "GET /readyz": [{ route: "/readyz" }],
    "GET /openapi.json": [{ route: "/openapi.json" }],
    "POST /v1/toolsets": [{ route: "/v1/toolsets", body: { mcpServers: { other: { url: mcp.url } } } }],
    "GET /v1/toolsets/{id}": [{ route: `/v1/toolsets/${UNKNOWN_TOOLSET}` }],
    "GET /v1/toolsets/{id}/declarations": [{ route: `/v1/toolsets/${UNKNOWN_TOOLSET}/declarations?format=prompt` }],
    "GET /v1/toolsets/{id}/tools": [{ route: `/v1/toolsets/${UNKNOWN_TOOLSET}/tools?query=echo` }],
    // The MCP route finds the toolset before any session: one the API never read needs Temporal.
    "POST /v1/toolsets/{id}/mcp": [{ route: `/v1/toolsets/${UNKNOWN_TOOLSET}/mcp`, body: MCP_INITIALIZE }],
    "GET /v1/toolsets/{id}/mcp": [{ route: `/v1/toolsets/${UNKNOWN_TOOLSET}/mcp` }],
    "DELETE /v1/toolsets/{id}/mcp": [{ route: `/v1/toolsets/${UNKNOWN_TOOLSET}/mcp` }],
    "POST /v1/runs": [
      { route: "/v1/runs", body: { script: QUICK_SCRIPT, toolset }, headers: { "idempotency-key": outageKey } },
    ],
    "GET /v1/runs": [{ route: "/v1/runs" }, { route: "/v1/runs?pageToken=c29tZS10b2tlbg" }],
    "GET /v1/runs/{id}": [{ route: run }],
    "GET /v1/runs/{id}/journal": [{ route: `${run}/journal` }],
    "POST /v1/runs/{id}/calls/{seq}/approve": [{ route: `${run}/calls/1/approve`, body: { by: "outage" } }],
    "POST /v1/runs/{id}/calls/{seq}/reject": [{ route: `${run}/calls/1/reject`, body: { reason: "outage" } }],
    "POST /v1/runs/{id}/calls/{seq}/resume": [{ route: `${run}/calls/1/resume`, body: {} }],
    "POST /v1/runs/{id}/calls/{seq}/resolve": [
      { route: `${run}/calls/1/resolve`, body: { result: { message: "outage" }, by: "outage" } },
    ],
    "POST /v1/runs/{id}/calls/{seq}/retry": [{ route: `${run}/calls/1/retry`, body: { by: "outage" } }],
    "POST /v1/runs/{id}/calls/{seq}/fail": [{ route: `${run}/calls/1/fail`, body: { reason: "outage" } }],
    "POST /v1/runs/{id}/approve": [{ route: `${run}/approve`, body: { by: "outage" } }],
    "POST /v1/runs/{id}/reject": [{ route: `${run}/reject`, body: { reason: "outage" } }],
    "POST /v1/runs/{id}/calls/{seq}/elicitation": [
      { route: `${run}/calls/1/elicitation`, body: { action: "decline" } },
    ],
    "POST /v1/runs/{id}/fork": [{ route: `${run}/fork`, body: { script: QUICK_SCRIPT } }],
    "GET /v1/runs/{id}/cassette": [{ route: `${run}/cassette` }],
    "POST /v1/runs/{id}/save": [{ route: `${run}/save`, body: { name: "savedDuringOutage" } }],
    "PUT /v1/runs/{id}/credentials": [{ route: `${run}/credentials`, body: credentials }],
    "POST /v1/runs/{id}/signals/{name}": [{ route: `${run}/signals/outage`, body: { during: "outage" } }],
    "POST /v1/runs/{id}/cancel": [{ route: `${run}/cancel` }],
    "POST /v1/runs/{id}/rollback": [{ route: `${run}/rollback`, body: { reason: "outage" } }],
    "PUT /v1/toolsets/{id}/credentials": [{ route: `/v1/toolsets/${toolset}/credentials`, body: credentials }],
    "PUT /v1/end-users/{user}/toolsets/{id}/credentials": [
      { route: `/v1/end-users/ada/toolsets/${toolset}/credentials`, body: credentials },
    ],
    "POST /v1/workflows": [
      { route: "/v1/workflows", body: { name: "outage", script: "export default async (n: number) => n + 1;" } },
    ],
    "GET /v1/workflows/{id}": [{ route: `/v1/workflows/${UNKNOWN_WORKFLOW}` }],
    "PUT /v1/events/endpoint": [{ route: "/v1/events/endpoint", body: { url: "http://127.0.0.1:9/outage-events" } }],
    "GET /v1/events/endpoint": [{ route: "/v1/events/endpoint" }],
    "POST /v1/codec/decode": [{ route: "/v1/codec/decode", body: { payloads: [plainPayload] } }],
    "POST /v1/codec/encode": [{ route: "/v1/codec/encode", body: { payloads: [plainPayload] } }],
    "POST /v1/hooks/{runId}/{name}": [{ route: `/v1/hooks/${runId}/nudge?token=${hookToken}`, body: { n: 1 } }],
  };
}

interface Answer {
  operation: string;
  route: string;
  status: number;
  body: ApiBody;
}

async function send(operation: string, request: Request): Promise<Answer> {
  const method = operation.split(" ")[0] ?? "GET";
  const { status, body } = await stack.request(method, request.route, request.body, request.headers);
  return { operation, route: request.route, status, body };
}

/** The table's requests, each with its operation, in the order `sendAll` answers them. */
function requestsOf(table: Record<string, Request[]>): { operation: string; request: Request }[] {
  return Object.entries(table).flatMap(([operation, list]) => list.map((request) => ({ operation, request })));
}

/** Sends every request of the table at once (each waits out the Temporal client's retries). */
async function sendAll(table: Record<string, Request[]>): Promise<Answer[]> {
  return Promise.all(requestsOf(table).map(({ operation, request }) => send(operation, request)));
}

/** The API's documented answer while no worker has answered a run's query in time: 503, try again. */
function noWorkerYet(answer: Answer): boolean {
  return answer.status === 503 && JSON.stringify(answer.body).includes("no worker answered");
}

async function parkedOnFirstCall(runId: string): Promise<ApiBody> {
  return waitFor(`run ${runId} parked on call 1`, async () => (await stack.request("GET", `/v1/runs/${runId}`)).body, {
    // Right after Temporal is back the API may answer without the parked calls (no worker answered
    // its query in time): keep asking.
    until: (body) => body.status === "parked" && JSON.stringify(body["parked"] ?? null).includes('"seq":1'),
  });
}

it("answers 503 unavailable on every route that needs Temporal while it is stopped, and loses nothing", async () => {
  const doc = (await (await fetch(`${stack.api.url}/openapi.json`)).json()) as OpenApiDocument;
  const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
  );

  const toolset = await registerToolset(stack, {
    mcpServers: { tools: { url: mcp.url } },
    policies: { "tools.echo": { approval: true } },
  });
  const runId = await startRun(stack, { script: PARKING_SCRIPT, toolset });
  await parkedOnFirstCall(runId);
  const outageKey = `outage-${randomUUID()}`;
  const table = requests(toolset, runId, outageKey);
  // Every documented operation has a request here, and nothing here is undocumented.
  expect(Object.keys(table).sort()).toEqual([...operations].sort());
  expect(await (await fetch(`${stack.api.url}/readyz`)).json()).toEqual({ ok: true, temporal: "reachable" });

  await temporal.stop();
  const sdk = createApiClient({ url: stack.api.url });
  const [answers, sdkError, cachedToolset] = await Promise.all([
    sendAll(table),
    sdk.getRun(runId).then(
      () => undefined,
      (error: unknown) => error,
    ),
    stack.request("GET", `/v1/toolsets/${toolset}`),
  ]);

  for (const answer of answers) {
    const [method = "", path = ""] = answer.operation.split(" ");
    const documented = doc.paths[path]?.[method.toLowerCase()];
    const label = `${answer.operation} (${answer.route}) → ${answer.status} ${JSON.stringify(answer.body)}`;
    if (WITHOUT_TEMPORAL.includes(answer.operation)) {
      expect(answer.status, label).toBe(200);
      expect(documented?.responses["503"], `${answer.operation} documents no 503`).toBeUndefined();
      continue;
    }
    expect([answer.status, answer.body.error?.code], label).toEqual([503, "unavailable"]);
    expect(answer.body.error?.message, label).toBe("Temporal is unreachable: the request did not complete; try again");
    expect(JSON.stringify(answer.body), "the answer does not reveal Temporal's address").not.toContain(
      temporal.address,
    );
    expect(documented?.responses["503"], `${answer.operation} documents its 503`).toBeDefined();
  }
  expect(sdkError).toBeInstanceOf(RewindApiError);
  expect(sdkError).toMatchObject({ status: 503, code: "unavailable", retryable: true });
  // A toolset is immutable: one the API already read is answered from its memory.
  expect([cachedToolset.status, cachedToolset.body.id]).toEqual([200, toolset]);
  // The operator's log says what happened, with the address and the transport's reason; nothing is an internal error.
  expect(errors).toEqual([]);
  const unreachable = warnings.filter((w) => w.message === "Temporal is unreachable");
  expect(unreachable.length).toBeGreaterThanOrEqual(answers.length - WITHOUT_TEMPORAL.length);
  expect(unreachable.every((w) => w.fields?.["temporal"] === temporal.address)).toBe(true);
  expect(unreachable.some((w) => String(w.fields?.["reason"]).includes("ECONNREFUSED"))).toBe(true);

  await temporal.start();

  // Nothing tried during the outage happened, not even in part.
  const listed = await waitFor("the runs list", async () => stack.request("GET", "/v1/runs"), {
    until: ({ status }) => status === 200,
    retryErrors: true,
  });
  expect(listed.body.runs?.map((r) => r.id)).toEqual([runId]);
  const parked = await parkedOnFirstCall(runId);
  expect(parked["parked"]).toEqual([expect.objectContaining({ seq: 1, reason: "approval" })]);
  const journal = await stack.request("GET", `/v1/runs/${runId}/journal`);
  expect(journal.body["entries"]).toEqual([expect.not.objectContaining({ decidedBy: expect.anything() })]);
  expect((await stack.request("GET", "/v1/events/endpoint")).status).toBe(404);

  // The run parked before the outage completes once approved.
  const approved = await stack.request("POST", `/v1/runs/${runId}/calls/1/approve`, { by: "after" });
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  expect(await waitForRun(stack, runId)).toMatchObject({ status: "completed", result: "done" });

  // The writes refused during the outage go through now, as first writes.
  const again = await sendAll({
    "POST /v1/toolsets": table["POST /v1/toolsets"] ?? [],
    "POST /v1/runs": table["POST /v1/runs"] ?? [],
    "POST /v1/workflows": table["POST /v1/workflows"] ?? [],
    "POST /v1/runs/{id}/save": table["POST /v1/runs/{id}/save"] ?? [],
  });
  expect(again.map((a) => [a.operation, a.status])).toEqual([
    ["POST /v1/toolsets", 201],
    ["POST /v1/runs", 201],
    ["POST /v1/workflows", 201],
    ["POST /v1/runs/{id}/save", 201],
  ]);

  // An API that never saw the toolset or the run finds both in Temporal.
  const fresh = await startApi(stack.config, temporal.address, undefined, silentLogger, {
    metrics: createPrometheusMetrics(),
  });
  try {
    const read = await fetch(`${fresh.url}/v1/toolsets/${toolset}`);
    expect([read.status, ((await read.json()) as ApiBody).id]).toEqual([200, toolset]);
    const run = (await (await fetch(`${fresh.url}/v1/runs/${runId}`)).json()) as ApiBody;
    expect(run).toMatchObject({ id: runId, status: "completed", toolset });
  } finally {
    await fresh.stop();
  }

  expect(await (await fetch(`${stack.api.url}/readyz`)).json()).toEqual({ ok: true, temporal: "reachable" });
  // And every route answers again (whatever its answer for a run that has ended). Asked all at
  // once, a query of a run that has ended waits for a worker to replay it; one that no worker
  // answered in time gets the documented 503 "try again", and is asked again, alone.
  const each = requestsOf(table);
  const firstAnswers = await sendAll(table);
  for (const [i, first] of firstAnswers.entries()) {
    const { operation, request } = each[i]!;
    const answer = noWorkerYet(first)
      ? await waitFor(`${operation} answered by a worker`, () => send(operation, request), {
          until: (again) => !noWorkerYet(again),
        })
      : first;
    expect(answer.status, `${answer.operation} → ${answer.status} ${JSON.stringify(answer.body)}`).toBeLessThan(500);
  }
}, 240_000);
