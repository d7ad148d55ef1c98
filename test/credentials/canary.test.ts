/**
 * A canary credential written at each scope — the toolset's at registration and by PUT, an end
 * user's, a run's own at start and renewed, a fork's — and one refused at registration, each
 * sent to a server that echoes what it received: in its tool listing (descriptions, schemas,
 * annotations) at registration and after a schema change, a 401's body and challenge, a 403's
 * scope, a tool result and its structuredContent, an `isError` result, a JSON-RPC error, a
 * progress message and a question (elicitation). Each credential set carries canaries a server
 * quotes in part, not whole: a cookie's value, the password of a Basic header, a quoted
 * auth-param — each a canary of its own, so scrubbing the whole value would not hide it. No canary may appear in clear in any Temporal history of the stack's task queue
 * (runs, the toolset's credentials workflow, event deliveries), a journal, a cassette, an API
 * answer, a delivered event, a span or a log line (the API's, and the Temporal SDK's at DEBUG).
 * Each place is first shown to hold what it should (the sealed credentials, the calls, the
 * scrubbed echoes, the events, the SDK's lines), so an empty search can't pass.
 */
import { randomUUID } from "node:crypto";
import { SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalEntry } from "../../src/shared/journal.ts";
import type { Logger } from "../../src/shared/logger.ts";
import { credentialsWorkflowId } from "../../src/shared/credentials.ts";
import { installTemporalRuntime } from "../../src/temporal/temporal-runtime.ts";
import { startEventReceiver, type EventReceiver } from "../helpers/event-receiver.ts";
import {
  startMcpServer,
  type HeaderMap,
  type RequestInfo,
  type TestMcpServer,
  type TestToolDefinition,
} from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";
import { historyText, openedSecretsIn, spanText, textOf } from "../helpers/secret-search.ts";
import { waitFor } from "../helpers/wait-for.ts";

const SCOPES = [
  "toolsetRegistration",
  "toolsetRejected",
  "toolsetPut",
  "endUser",
  "run",
  "runRenewed",
  "fork",
] as const;
type Scope = (typeof SCOPES)[number];
const CANARY = Object.fromEntries(SCOPES.map((scope) => [scope, `canary-${scope}-${randomUUID()}`])) as Record<
  Scope,
  string
>;
/** Canaries a header carries as a part: a cookie's value, Basic's password, a quoted auth-param. */
const PART_CANARY = Object.fromEntries(
  SCOPES.map((scope) => [
    scope,
    {
      sid: `canary-${scope}-sid-${randomUUID()}`,
      password: `canary-${scope}-pw-${randomUUID()}`,
      token: `canary-${scope}-tok-${randomUUID()}`,
    },
  ]),
) as Record<Scope, { sid: string; password: string; token: string }>;
/** Every canary of a scope. */
const canariesOf = (scope: Scope) => [CANARY[scope], ...Object.values(PART_CANARY[scope])];
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
/**
 * A credential set carrying a canary in an Authorization header and in a header of its own, and
 * the part canaries in a cookie, a Basic header and a `Token token="…"` header.
 */
const credentialsOf = (scope: Scope) => ({
  mcpServers: {
    svc: {
      headers: {
        authorization: `Bearer ${CANARY[scope]}`,
        "x-api-key": CANARY[scope],
        cookie: `theme=dark; sid=${PART_CANARY[scope].sid}`,
        "x-basic": basic("svc-user", PART_CANARY[scope].password),
        "x-token": `Token token="${PART_CANARY[scope].token}", realm="svc"`,
      },
    },
  },
});

const key = `canary-key-${randomUUID()}`;
const namespace = `canary-${randomUUID().slice(0, 8)}`;
const auth = { authorization: `Bearer ${key}` };
const exporter = new InMemorySpanExporter();
const logged: { level: string; message: string; fields: Record<string, unknown> | undefined }[] = [];
const capture = (level: string) => (message: string, fields?: Record<string, unknown>) => {
  logged.push({ level, message, fields });
};
const logger: Logger = {
  debug: capture("debug"),
  info: capture("info"),
  warn: capture("warn"),
  error: capture("error"),
};

let stack: RewindStack;
let server: TestMcpServer;
let receiver: EventReceiver;
let toolset = "";
/** The run parked by the schema change (not among `runs`: it fails, rejected). */
let schemaChangeRun = "";
/** Every API answer, for the search. */
const answers: string[] = [];
/** The runs made, by the scope whose canary they were started with. */
const runs: Partial<Record<"toolset" | "endUser" | "run" | "fork", string>> = {};
/** The Authorization headers the server accepts; any other gets a 401 (a fork's a 403) quoting it. */
const accepted = new Set<string>();
/** Every Authorization header the server received, accepted or not. */
const received: string[] = [];

async function request(method: string, route: string, body?: unknown): Promise<{ status: number; body: ApiBody }> {
  const answer = await stack.request(method, route, body, auth);
  answers.push(JSON.stringify(answer.body));
  return answer;
}

/** What the server quotes back of the headers it got: two whole, three in part. */
const headersOf = (headers: HeaderMap) => ({
  authorization: headers.authorization ?? null,
  apiKey: headers["x-api-key"] ?? null,
  sid: /sid=([^;]+)/.exec(headers.cookie ?? "")?.[1] ?? null,
  password:
    Buffer.from((headers["x-basic"] ?? "").replace(/^Basic /, ""), "base64")
      .toString()
      .split(":")[1] ?? null,
  token: /token="([^"]*)"/.exec(headers["x-token"] ?? "")?.[1] ?? null,
});
/** `headersOf` once scrubbed. */
const REDACTED_HEADERS = {
  authorization: "[redacted]",
  apiKey: "[redacted]",
  sid: "[redacted]",
  password: "[redacted]",
  token: "[redacted]",
};

/** A listing that quotes the headers of the request it answers: in descriptions, schemas, annotations. */
function quotingListing(tools: TestToolDefinition[], headers: HeaderMap): TestToolDefinition[] {
  const quoted = headersOf(headers);
  return tools.map((tool) => ({
    ...tool,
    description: `${tool.description ?? tool.name} (for ${String(quoted.authorization)}, sid ${String(quoted.sid)})`,
    inputSchema: {
      ...tool.inputSchema,
      description: `password ${String(quoted.password)}`,
      properties: {
        ...((tool.inputSchema["properties"] as Record<string, unknown> | undefined) ?? {}),
        as: { type: "string", description: `token ${String(quoted.token)}`, default: String(quoted.apiKey) },
      },
    },
    annotations: { title: `${tool.name} as ${String(quoted.sid)}` },
  }));
}

/** The gate in front of the server: refusals that quote the refused headers back. */
function gate(info: RequestInfo) {
  const authorization = info.headers.authorization ?? "";
  received.push(authorization);
  if (accepted.has(authorization)) return undefined;
  const body = JSON.stringify({ error: "invalid_token", received: headersOf(info.headers) });
  if (authorization.includes("canary-fork-")) {
    return {
      status: 403,
      headers: {
        "www-authenticate": `Bearer error="insufficient_scope", scope="admin ${String(headersOf(info.headers).token)}"`,
        "content-type": "application/json",
      },
      body,
    };
  }
  return {
    status: 401,
    headers: {
      "www-authenticate": `Bearer realm="canary", error="invalid_token", error_description="refused ${authorization}"`,
      "content-type": "application/json",
    },
    body,
  };
}

const text = (value: string, isError = false): CallToolResult => ({
  content: [{ type: "text", text: value }],
  ...(isError ? { isError: true } : {}),
});
/** Tools that answer with what they received. */
const REFLECTING: TestToolDefinition[] = [
  echoTool("whoami"),
  {
    name: "reflect",
    inputSchema: { type: "object" },
    async handler(_args, extra) {
      await extra.progress(1, 2, `working for ${String(extra.headers.authorization)}`);
      const asked = `Go on as ${String(extra.headers.authorization)}?`;
      await extra.ask("elicitation/create", {
        message: asked,
        requestedSchema: { type: "object", properties: { ok: { type: "boolean", description: asked } } },
      });
      return {
        ...text(`you sent ${JSON.stringify(headersOf(extra.headers))}`),
        structuredContent: headersOf(extra.headers),
      };
    },
  },
  {
    name: "reflectError",
    inputSchema: { type: "object" },
    handler: async (_args, extra) => text(`refused ${JSON.stringify(headersOf(extra.headers))}`, true),
  },
  {
    name: "reflectRpcError",
    inputSchema: { type: "object" },
    handler: (_args, extra) =>
      Promise.reject(
        new McpError(ErrorCode.InvalidRequest, `bad credentials ${JSON.stringify(headersOf(extra.headers))}`),
      ),
  },
];

/** Calls every reflecting tool; a tool's error is kept as the script saw it. */
const SCRIPT = (tag: string) => `import { svc, ToolError } from "rewind:tools";
export default async () => {
  const seen: unknown[] = [await svc.whoami({ message: ${JSON.stringify(tag)} })];
  seen.push(await svc.reflect({}));
  for (const call of [() => svc.reflectError({}), () => svc.reflectRpcError({})]) {
    try { seen.push(await call()); } catch (e) { seen.push(e instanceof ToolError ? [e.code, e.message] : String(e)); }
  }
  return seen;
};`;

beforeAll(async () => {
  // Before the stack's own (ERROR, to the console): the runtime is installed once per process.
  installTemporalRuntime(logger, "DEBUG");
  stack = await startRewindStack({ env: { REWIND_API_KEYS: `${key}:${namespace}` }, spanExporter: exporter, logger });
  server = await startMcpServer({ tools: REFLECTING, intercept: gate, listedFor: quotingListing });
  receiver = await startEventReceiver();
  const endpoint = await request("PUT", "/v1/events/endpoint", { url: receiver.url });
  receiver.setSecret(String(endpoint.body["secret"]));
});
afterAll(async () => {
  await stack?.stop();
  await Promise.all([server?.close(), receiver?.close()]);
});

async function start(body: Record<string, unknown>): Promise<string> {
  const started = await request("POST", "/v1/runs", body);
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return String(started.body.id);
}

async function parkedOn(id: string, reason: string, scope: string): Promise<void> {
  const event = await receiver.waitFor(id, "credentials.expired");
  expect(event.data).toMatchObject({ seq: 1, tool: "svc.whoami", reason, scope });
  expect((await request("GET", `/v1/runs/${id}`)).body["parked"]).toEqual([
    expect.objectContaining({ seq: 1, reason }),
  ]);
}

/** The run completed having called every reflecting tool with `scope`'s canary. */
async function completedWith(id: string, scope: Scope): Promise<void> {
  // `reflect` (call 2) asks a question that quotes the credentials; the harness declines it.
  expect((await receiver.waitFor(id, "call.input_requested")).data).toMatchObject({
    seq: 2,
    tool: "svc.reflect",
    message: "Go on as [redacted]?",
  });
  expect((await request("POST", `/v1/runs/${id}/calls/2/elicitation`, { action: "decline" })).status).toBeLessThan(300);
  const done = await waitForRun(stack, id, 30_000, auth);
  answers.push(JSON.stringify(done));
  expect(done.status, JSON.stringify(done)).toBe("completed");
  expect(received.filter((a) => a === `Bearer ${CANARY[scope]}`).length).toBeGreaterThanOrEqual(4);
  expect(server.calls.filter((c) => c.headers.authorization === `Bearer ${CANARY[scope]}`).map((c) => c.name)).toEqual(
    expect.arrayContaining(["whoami", "reflect", "reflectError", "reflectRpcError"]),
  );
}

describe("a canary credential at each scope", () => {
  it("registration: a refused one is a 422 that does not quote it; an accepted one lists the tools", async () => {
    const refused = await request("POST", "/v1/toolsets", {
      mcpServers: { svc: { url: server.url } },
      credentials: credentialsOf("toolsetRejected"),
    });
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    expect(refused.body.error?.message).toMatch(/svc.*401/);
    expect(received).toContain(`Bearer ${CANARY.toolsetRejected}`);

    accepted.add(`Bearer ${CANARY.toolsetRegistration}`);
    const registered = await request("POST", "/v1/toolsets", {
      mcpServers: { svc: { url: server.url } },
      credentials: credentialsOf("toolsetRegistration"),
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    toolset = String(registered.body.id);
    expect(received).toContain(`Bearer ${CANARY.toolsetRegistration}`);
    // The listing quoted the credentials; the toolset pins it with them taken out.
    const pinned = await request("GET", `/v1/toolsets/${toolset}`);
    expect(JSON.stringify(pinned.body)).toContain("(for [redacted], sid [redacted])");
    expect(JSON.stringify(pinned.body)).toContain("token [redacted]");
    expect(JSON.stringify(pinned.body)).toContain("password [redacted]");
    const declarations = await (
      await fetch(`${stack.api.url}/v1/toolsets/${toolset}/declarations`, { headers: auth })
    ).text();
    answers.push(declarations);
    expect(declarations).toContain("(for [redacted], sid [redacted])");
  });

  it("toolset: the registration's expires (a 401 parks the call), the one PUT resumes it", async () => {
    accepted.delete(`Bearer ${CANARY.toolsetRegistration}`);
    runs.toolset = await start({ toolset, script: SCRIPT("toolset") });
    await parkedOn(runs.toolset, "credentialsExpired", "toolset");
    accepted.add(`Bearer ${CANARY.toolsetPut}`);
    expect((await request("PUT", `/v1/toolsets/${toolset}/credentials`, credentialsOf("toolsetPut"))).status).toBe(200);
    await completedWith(runs.toolset, "toolsetPut");
  });

  it("end user: a 401 parks the call, writing them again once valid resumes it", async () => {
    expect(
      (await request("PUT", `/v1/end-users/erin/toolsets/${toolset}/credentials`, credentialsOf("endUser"))).status,
    ).toBe(200);
    runs.endUser = await start({ toolset, endUser: "erin", script: SCRIPT("endUser") });
    await parkedOn(runs.endUser, "credentialsExpired", "endUser");
    accepted.add(`Bearer ${CANARY.endUser}`);
    expect(
      (await request("PUT", `/v1/end-users/erin/toolsets/${toolset}/credentials`, credentialsOf("endUser"))).status,
    ).toBe(200);
    await completedWith(runs.endUser, "endUser");
  });

  it("run: the ones it started with get a 401, the renewed ones resume it", async () => {
    runs.run = await start({ toolset, script: SCRIPT("run"), credentials: credentialsOf("run") });
    await parkedOn(runs.run, "credentialsExpired", "run");
    expect(received).toContain(`Bearer ${CANARY.run}`);
    accepted.add(`Bearer ${CANARY.runRenewed}`);
    expect((await request("PUT", `/v1/runs/${runs.run}/credentials`, credentialsOf("runRenewed"))).status).toBe(200);
    await completedWith(runs.run, "runRenewed");
  });

  it("fork: its own get a 403 whose scope quotes them, then are sent again once valid", async () => {
    const forked = await request("POST", `/v1/runs/${String(runs.run)}/fork`, {
      script: SCRIPT("fork"),
      credentials: credentialsOf("fork"),
    });
    expect(forked.status, JSON.stringify(forked.body)).toBe(201);
    runs.fork = String(forked.body.id);
    await parkedOn(runs.fork, "insufficientScope", "run");
    expect((await receiver.waitFor(runs.fork, "credentials.expired")).data["scopeAsked"]).toBe("admin [redacted]");
    accepted.add(`Bearer ${CANARY.fork}`);
    expect((await request("POST", `/v1/runs/${runs.fork}/calls/1/resume`)).status).toBe(200);
    await completedWith(runs.fork, "fork");
  });

  it("schema change: the changed listing quotes the credentials, and the parked call shows it scrubbed", async () => {
    const required = { type: "object", properties: { message: { type: "string" }, project: { type: "string" } } };
    server.setTools(
      REFLECTING.map((tool) =>
        tool.name === "whoami" ? { ...tool, inputSchema: { ...required, required: ["message", "project"] } } : tool,
      ),
    );
    await server.notifyToolsChanged();
    await server.dropSessions();
    const id = await start({ toolset, script: SCRIPT("schemaChange") });
    schemaChangeRun = id;
    const parked = await waitFor(
      `run ${id} to park its first call for the schema change`,
      async () => {
        const view = await request("GET", `/v1/runs/${id}`);
        const calls = view.body["parked"] as { seq: number; reason: string; details: unknown }[] | undefined;
        return calls?.find((c) => c.reason === "schemaChanged");
      },
      { timeoutMs: 30_000 },
    );
    const current = JSON.stringify(parked.details);
    expect(current).toContain("token [redacted]");
    expect(current).toContain("password [redacted]");
    expect(current).toContain('"required":["message","project"]');
    expect((await request("POST", `/v1/runs/${id}/calls/1/reject`, { reason: "the schema changed" })).status).toBe(200);
    const ended = await waitForRun(stack, id, 30_000, auth);
    answers.push(JSON.stringify(ended));
    expect(ended.status, JSON.stringify(ended)).toBe("failed");
    server.setTools(REFLECTING);
  });
});

type Place = { where: string; text: string };
/** `scope → where` for every canary found in clear. */
const leaksIn = (places: Place[]) =>
  places.flatMap(({ where, text: found }) =>
    SCOPES.flatMap((s) =>
      canariesOf(s)
        .filter((canary) => found.includes(canary))
        .map((c) => `${c} → ${where}`),
    ),
  );
const runIds = () => Object.values(runs);

describe("no canary is anywhere but the MCP connection", () => {
  it("in any Temporal history of the task queue: runs, the credentials workflow, event deliveries", async () => {
    const expected = [
      ...runIds(),
      schemaChangeRun,
      credentialsWorkflowId(namespace, toolset),
      ...receiver.events.map((e) => `event/${e.id}`),
    ];
    const executions = await waitFor(
      "every workflow of the task queue to be listed",
      async () => {
        const listed: { workflowId: string; runId: string }[] = [];
        for await (const e of stack.client.workflow.list({
          query: `TaskQueue = '${stack.config.temporal.taskQueue}'`,
        }))
          listed.push(e);
        return listed;
      },
      {
        timeoutMs: 20_000,
        until: (listed) => expected.every((id) => listed.some((e) => e.workflowId === id)),
        shown: (listed) => listed.map((e) => e.workflowId),
      },
    );
    const places = await Promise.all(
      executions.map(async (e) => ({
        where: `history of ${e.workflowId}`,
        text: await historyText(stack.client, e.workflowId, e.runId),
      })),
    );
    // The credentials are there, sealed: every written canary opens out of some history.
    const opened = openedSecretsIn(places.map((p) => p.text).join("\n")).join("\n");
    expect(SCOPES.filter((s) => !opened.includes(CANARY[s]))).toEqual(["toolsetRejected"]);
    expect(places.find((p) => p.where === `history of ${String(runs.toolset)}`)?.text).toContain("reflectRpcError");
    expect(leaksIn(places)).toEqual([]);
  }, 60_000);

  it("in journals, cassettes and run views", async () => {
    const places: Place[] = [];
    for (const id of runIds()) {
      const journal = await request("GET", `/v1/runs/${id}/journal`);
      const entries = journal.body["entries"] as JournalEntry[];
      expect(entries.map((e) => e.tool)).toEqual([
        "svc.whoami",
        "svc.reflect",
        "svc.reflectError",
        "svc.reflectRpcError",
      ]);
      // Every echo arrived, scrubbed: the result, the progress, the question, both errors.
      const [, reflected, toolError, rpcError] = entries;
      expect(reflected?.result).toEqual(REDACTED_HEADERS);
      expect(reflected?.progress?.message).toBe("working for [redacted]");
      expect(reflected?.inputs?.[0]).toMatchObject({ message: "Go on as [redacted]?" });
      expect(toolError?.error?.message).toContain('"authorization":"[redacted]"');
      expect(rpcError?.error?.message).toContain('"authorization":"[redacted]"');
      const cassette = await request("GET", `/v1/runs/${id}/cassette`);
      expect(JSON.stringify(cassette.body)).toContain("svc.reflectError");
      const view = await request("GET", `/v1/runs/${id}`);
      expect(view.body.status).toBe("completed");
      // What the script got back from `reflect`, and returned.
      expect(view.body.result).toContainEqual(REDACTED_HEADERS);
      places.push(
        { where: `journal of ${id}`, text: await textOf(journal.body) },
        { where: `cassette of ${id}`, text: await textOf(cassette.body) },
        { where: `view of ${id}`, text: await textOf(view.body) },
      );
    }
    const list = await request("GET", "/v1/runs");
    expect(list.body.runs?.map((r) => r.id)).toEqual(expect.arrayContaining(runIds()));
    expect(answers.length).toBeGreaterThan(20);
    expect(
      leaksIn([
        ...places,
        { where: "the run list", text: JSON.stringify(list.body) },
        ...answers.map((a, i) => ({ where: `API answer #${i}`, text: a })),
      ]),
    ).toEqual([]);
  });

  it("in delivered events", async () => {
    for (const id of runIds()) await receiver.waitFor(id, "run.completed");
    expect(
      receiver.events
        .filter((e) => e.type === "credentials.expired")
        .map((e) => e.runId)
        .sort(),
    ).toEqual(runIds().sort());
    expect(receiver.misfits).toEqual([]);
    expect(leaksIn(receiver.bodies.map((body, i) => ({ where: `event body #${i}`, text: body })))).toEqual([]);
  });

  it("in spans", async () => {
    const spans = exporter.getFinishedSpans();
    expect(spans.filter((s) => s.name === "tools/call reflect").length).toBeGreaterThanOrEqual(runIds().length);
    expect(
      spans.filter((s) => s.name === "tools/call whoami" && s.status.code === SpanStatusCode.ERROR).length,
    ).toBeGreaterThanOrEqual(runIds().length);
    expect(
      leaksIn(await Promise.all(spans.map(async (s) => ({ where: `span ${s.name}`, text: await spanText(s) })))),
    ).toEqual([]);
  });

  it("in the log: the API's and the Temporal SDK's, down to DEBUG", async () => {
    const sdk = logged.filter((l) => l.fields?.["sdk"] === true);
    // The SDK's lines reach the capture, among them the failed attempts that parked the calls.
    expect(sdk.some((l) => l.level === "debug")).toBe(true);
    const failed = sdk.filter((l) => /failed/i.test(l.message) && runIds().includes(String(l.fields?.["workflowId"])));
    expect(failed.length).toBeGreaterThanOrEqual(runIds().length);
    const failures = await textOf(failed);
    expect(failures).toContain("refused the credentials (HTTP 401)");
    expect(failures).toContain("admin [redacted]");
    expect(
      leaksIn(
        await Promise.all(
          logged.map(async (l, i) => ({ where: `log line #${i} (${l.level}: ${l.message})`, text: await textOf(l) })),
        ),
      ),
    ).toEqual([]);
  });
});
