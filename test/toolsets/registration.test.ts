/**
 * Registering toolsets through the API against real MCP servers: every page of tools pinned,
 * the id content-addressed and stable, derived toolsets, storage that outlives the API, and
 * every way a server can be wrong answered with 422 naming it — nothing stored — except a tool
 * whose schema can't be used, which is only left out.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { startEverythingServer } from "../helpers/everything-server.ts";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";

let stack: RewindStack;
let github: TestMcpServer;
let paged: TestMcpServer;
const closers: (() => Promise<void>)[] = [];

const listIssues = {
  name: "list_issues",
  description: "List the issues of a repository.",
  inputSchema: {
    type: "object",
    properties: { repo: { type: "string" }, state: { type: "string", enum: ["open", "closed"] } },
    required: ["repo"],
  },
  outputSchema: {
    type: "object",
    properties: {
      issues: {
        type: "array",
        items: {
          type: "object",
          properties: { number: { type: "number" }, title: { type: "string" } },
          required: ["number", "title"],
        },
      },
    },
    required: ["issues"],
  },
  annotations: { readOnlyHint: true },
  handler: async () => ({ content: [], structuredContent: { issues: [] } }),
};
const createIssue = {
  name: "create_issue",
  description: "Open an issue.",
  inputSchema: {
    type: "object",
    properties: { repo: { type: "string" }, title: { type: "string" } },
    required: ["repo", "title"],
    additionalProperties: false,
  },
  handler: async () => ({ content: [{ type: "text" as const, text: '{"number":1}' }] }),
};

function listen(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`)),
  );
}

beforeAll(async () => {
  stack = await startRewindStack();
  github = await startMcpServer({ tools: [listIssues, createIssue] });
  paged = await startMcpServer({
    pageSize: 10,
    tools: Array.from({ length: 25 }, (_, i) => ({
      name: `tool_${String(i).padStart(2, "0")}`,
      inputSchema: { type: "object" },
      handler: async () => ({ content: [] }),
    })),
  });
});
afterAll(async () => {
  await Promise.all([github?.close(), paged?.close(), ...closers.map((close) => close())]);
  await stack?.stop();
});

const register = (body: unknown) => stack.request("POST", "/v1/toolsets", body);

describe("POST /v1/toolsets", () => {
  it("pins every tool of every server with its schemas and annotations, and host tools from the document", async () => {
    const { status, body } = await register({
      mcpServers: { github: { url: github.url }, paged: { url: paged.url } },
      hostTools: {
        harness: {
          taskQueue: "harness-q",
          tools: {
            ask_user: {
              description: "Ask the user.",
              inputSchema: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
            },
          },
        },
      },
      policies: { "github.create_issue": { onInterruption: "at_most_once", timeout: "30s" } },
    });
    expect(status, JSON.stringify(body)).toBe(201);
    expect(body.id).toMatch(/^ts_[0-9a-f]{64}$/);
    const document = body.document as {
      mcpServers: Record<string, { tools: { name: string; annotations?: unknown; outputSchema?: unknown }[] }>;
      hostTools: Record<string, unknown>;
      policies: unknown;
    };
    expect(document.mcpServers["paged"]?.tools).toHaveLength(25);
    expect(document.mcpServers["github"]?.tools.map((t) => t.name)).toEqual(["create_issue", "list_issues"]);
    expect(document.mcpServers["github"]?.tools[1]).toMatchObject({
      annotations: { readOnlyHint: true },
      outputSchema: listIssues.outputSchema,
    });
    expect(document.hostTools["harness"]).toMatchObject({ taskQueue: "harness-q", tools: [{ name: "ask_user" }] });
    expect(document.policies).toEqual({ "github.create_issue": { onInterruption: "at_most_once", timeoutMs: 30_000 } });
  });

  it("gives the same id for the same toolset in any key order, 200 on a repeat, another id when a policy changes", async () => {
    const first = await register({
      mcpServers: { github: { url: github.url } },
      policies: { "github.create_issue": { approval: true, concurrency: 2 } },
    });
    const again = await register({
      policies: { "github.create_issue": { concurrency: 2, approval: true } },
      mcpServers: { github: { url: github.url } },
    });
    const other = await register({
      mcpServers: { github: { url: github.url } },
      policies: { "github.create_issue": { approval: false, concurrency: 2 } },
    });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(other.body.id).not.toBe(first.body.id);
  });

  it("serves the pinned document back, and 404 for an unknown id", async () => {
    const { body } = await register({ mcpServers: { github: { url: github.url } } });
    expect(body["omittedTools"]).toEqual([]);
    const fetched = await stack.request("GET", `/v1/toolsets/${body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual({ id: body.id, document: body.document });
    expect((await stack.request("GET", `/v1/toolsets/ts_${"a".repeat(64)}`)).status).toBe(404);
    expect((await stack.request("GET", "/v1/toolsets/whatever")).status).toBe(404);
  });

  it("derives a toolset from a base: same servers, tools, policies and http allow-list, its own workflows and id", async () => {
    const base = await register({
      mcpServers: { github: { url: github.url } },
      policies: { "github.create_issue": { approval: true } },
      http: { allowedHosts: ["api.github.com"] },
    });
    const stored = await stack.request("POST", "/v1/workflows", {
      name: "triage",
      script: 'export default async () => "triaged";',
    });
    expect(stored.status, JSON.stringify(stored.body)).toBe(201);
    const derived = await register({ base: base.body.id, workflows: { triage: stored.body.id } });
    expect(derived.status).toBe(201);
    expect(derived.body.id).not.toBe(base.body.id);
    const doc = derived.body.document as Record<string, unknown>;
    const baseDoc = base.body.document as Record<string, unknown>;
    expect(doc["base"]).toBe(base.body.id);
    expect(doc["mcpServers"]).toEqual(baseDoc["mcpServers"]);
    expect(doc["policies"]).toEqual(baseDoc["policies"]);
    expect(doc["http"]).toEqual({ allowedHosts: ["api.github.com"] });
    expect(doc["workflows"]).toEqual({ triage: stored.body.id });
    // Content-addressed: the same derivation is the same toolset, other workflows another.
    const again = await register({ workflows: { triage: stored.body.id }, base: base.body.id });
    expect([again.status, again.body.id]).toEqual([200, derived.body.id]);
    expect((await register({ base: base.body.id })).body.id).not.toBe(derived.body.id);
    expect((await register({ base: base.body.id, workflows: { triage: `wf_${"c".repeat(64)}` } })).status).toBe(404);
    expect((await register({ base: `ts_${"b".repeat(64)}` })).status).toBe(404);
  });

  it("refuses a derived toolset that sets anything but base and workflows, naming the field", async () => {
    const base = await register({ mcpServers: { github: { url: github.url } } });
    const tries: [string, Record<string, unknown>][] = [
      ["mcpServers", { mcpServers: { x: { url: github.url } } }],
      ["hostTools", { hostTools: { h: { taskQueue: "q", tools: {} } } }],
      ["policies", { policies: { "github.create_issue": { approval: true } } }],
      ["http", { http: { allowedHosts: ["evil.example"] } }],
      ["credentials", { credentials: { mcpServers: { github: { headers: { authorization: "Bearer x" } } } } }],
    ];
    for (const [field, extra] of tries) {
      const { status, body } = await register({ base: base.body.id, ...extra });
      expect(status, field).toBe(400);
      expect(body.error?.message, field).toMatch(new RegExp(`^${field}: `));
      expect(body.error?.details, field).toMatchObject({ field });
    }
  });

  it("keeps toolsets in Temporal: a new API process finds them", async () => {
    const { body } = await register({ mcpServers: { github: { url: github.url } } });
    const other = await startRewindStack({
      noWorker: true,
      env: { REWIND_TASK_QUEUE: stack.config.temporal.taskQueue },
    });
    try {
      const fetched = await other.request("GET", `/v1/toolsets/${body.id}`);
      expect(fetched.status).toBe(200);
      expect(fetched.body.document).toEqual(body.document);
    } finally {
      await other.stop();
    }
  });

  it("pins a real third-party server (server-everything)", async () => {
    const everything = await startEverythingServer();
    closers.push(() => everything.close());
    const { status, body } = await register({ mcpServers: { everything: { url: everything.url } } });
    expect(status, JSON.stringify(body)).toBe(201);
    const tools = (
      body.document as { mcpServers: { everything: { tools: { name: string }[] } } }
    ).mcpServers.everything.tools.map((t) => t.name);
    expect(tools).toContain("echo");
    const dts = await fetch(`${stack.api.url}/v1/toolsets/${body.id}/declarations?format=dts`).then((r) => r.text());
    expect(dts).toContain("export const everything");
  });
});

describe("registration failures: 422 naming the server, nothing stored", () => {
  const expectRejected = async (url: string, reason: RegExp) => {
    const started = Date.now();
    const { status, body } = await register({ mcpServers: { broken: { url } } });
    expect(status, JSON.stringify(body)).toBe(422);
    expect(body.error?.code).toBe("toolsetRejected");
    expect(body.error?.message).toContain("broken");
    expect(JSON.stringify(body.error?.details)).toMatch(reason);
    return Date.now() - started;
  };

  it("an unreachable server", async () => {
    const url = await listen((_req, res) => res.end());
    await closers.pop()?.();
    await expectRejected(url, /unreachable/);
  });

  it("a server that is not MCP", async () => {
    const url = await listen((_req, res) => {
      res.writeHead(404, { "content-type": "text/html" });
      res.end("<html>nope</html>");
    });
    await expectRejected(url, /notMcp|protocol/);
  });

  it("a server that never answers, within the bound", async () => {
    const url = await listen(() => {
      /* never answers */
    });
    const took = await expectRejected(url, /timedOut/);
    expect(took).toBeLessThan(20_000);
  }, 30_000);

  it("duplicate tool names", async () => {
    const dup = await startMcpServer({ tools: [createIssue, { ...createIssue }] });
    closers.push(() => dup.close());
    await expectRejected(dup.url, /duplicateTool/);
  });

  it("(not one) a tool with an invalid schema is only left out, the response saying why", async () => {
    const invalid = await startMcpServer({
      tools: [
        listIssues,
        { ...createIssue, inputSchema: { type: "object", properties: { a: { type: "no-such-type" } } } },
      ],
    });
    closers.push(() => invalid.close());
    const { status, body } = await register({ mcpServers: { broken: { url: invalid.url } } });
    expect(status, JSON.stringify(body)).toBe(201);
    expect(
      (body.document as { mcpServers: Record<string, { tools: { name: string }[] }> }).mcpServers["broken"]?.tools.map(
        (t) => t.name,
      ),
    ).toEqual(["list_issues"]);
    expect(body["omittedTools"]).toEqual([
      {
        server: "broken",
        tool: "create_issue",
        schema: "inputSchema",
        reason: "invalidSchema",
        message: expect.stringMatching(/\/properties\/a\/type/),
      },
    ]);
  });

  it("(not one) a tool whose pattern RE2 can't run (lookahead) is left out as unsupportedPattern", async () => {
    const lookahead = await startMcpServer({
      tools: [
        listIssues,
        {
          ...createIssue,
          inputSchema: { type: "object", properties: { password: { type: "string", pattern: "^(?=.*\\d).{8,}$" } } },
        },
      ],
    });
    closers.push(() => lookahead.close());
    const { status, body } = await register({ mcpServers: { strict: { url: lookahead.url } } });
    expect(status, JSON.stringify(body)).toBe(201);
    expect(body["omittedTools"]).toEqual([
      {
        server: "strict",
        tool: "create_issue",
        schema: "inputSchema",
        reason: "unsupportedPattern",
        message: expect.stringMatching(/RE2.*\(\?=/),
      },
    ]);
  });

  it("a host tool's invalid schema, which the harness wrote", async () => {
    const { status, body } = await register({
      hostTools: { harness: { taskQueue: "q", tools: { ask: { inputSchema: { type: "no-such-type" } } } } },
    });
    expect(status).toBe(422);
    expect(body.error).toMatchObject({
      code: "toolsetRejected",
      message: expect.stringMatching(/host-tool group "harness": tool "ask" input schema can't be used/),
      details: { reason: "invalidSchema" },
    });
  });

  it("bad documents are 400 with the field", async () => {
    const cases: [unknown, RegExp][] = [
      [{ mcpServers: { "not-an-identifier": { url: github.url } } }, /identifier/],
      [{ mcpServers: { github: { url: "ftp://x" } } }, /http/],
      [{ mcpServers: { sleep: { url: github.url } } }, /built-in/],
      [
        { mcpServers: { "my-server": { url: github.url } } },
        /"my-server" is not a JavaScript identifier.*\(e\.g\. "myServer"\)/,
      ],
      ...["package", "class", "delete", "new", "let", "static", "enum", "interface", "yield"].map(
        (name): [unknown, RegExp] => [{ mcpServers: { [name]: { url: github.url } } }, /reserved word/],
      ),
      [{ mcpServers: { eval: { url: github.url } } }, /hide the script's global eval/],
      [{ mcpServers: { Object: { url: github.url } } }, /hide the script's global Object/],
      [{ hostTools: { fetch: { taskQueue: "q", tools: {} } } }, /hide the script's global fetch/],
      [{ mcpServers: { rewind: { url: github.url } } }, /rewind/],
      [{ mcpServers: { __proto__x: { url: github.url } } }, /starts with __/],
      [JSON.parse(`{"mcpServers":{"__proto__":{"url":"${github.url}"}}}`), /starts with __/],
      [{ workflows: { delete: "some-workflow" } }, /reserved word/],
      [{ mcpServers: { github: { url: github.url } }, policies: { "github.nope": { approval: true } } }, /not a tool/],
      [{ mcpServers: { github: { url: github.url } }, policies: { "github.create_issue": { retries: 3 } } }, /retries/],
      [{ http: { allowedHosts: ["http://x.com"] } }, /allowedHosts/],
      [{ surprise: true }, /surprise/],
    ];
    for (const [body, message] of cases) {
      const response = await register(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error?.message).toMatch(message);
    }
  });
});
