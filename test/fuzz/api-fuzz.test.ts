/**
 * Property tests of the API driven by its own OpenAPI document (`GET /openapi.json` of a test
 * stack): for every operation, fast-check sends bodies generated from the operation's schema and
 * mutated (unknown fields, wrong types, huge strings, `__proto__` keys), arbitrary JSON,
 * malformed JSON text, wrong content types and encodings, odd path parameters (`../`, `%00`,
 * malformed escapes, very long ids) and odd query strings and headers. Whatever it sends, the API
 * answers within 30 s, never with a 5xx, every 4xx is `{error: {code, message}}` as JSON (or, on
 * a route that speaks JSON-RPC as its document says, a JSON-RPC error), and nothing reaches the
 * test process's Object.prototype. Bodies over the 2 MB limit are refused
 * with 413 before they are read. URLs in generated bodies point only at loopback servers; any
 * run a request starts is cancelled.
 */
import http from "node:http";
import { randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLoopbackServer, type LoopbackServer } from "../helpers/http-loopback.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { silentLogger, type Logger } from "../../src/shared/logger.ts";

interface Schema {
  type?: string;
  $ref?: string;
  anyOf?: Schema[];
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  propertyNames?: Schema;
  items?: Schema;
  pattern?: string;
  minimum?: number;
  maximum?: number;
}
interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  schema: Schema;
}
interface OperationDoc {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  security?: unknown[];
  responses?: Record<string, unknown>;
}

/** An operation whose refusals may be JSON-RPC errors (the MCP route), as its document says. */
const speaksJsonRpc = (op: OperationDoc): boolean => JSON.stringify(op.responses?.["400"] ?? {}).includes("McpRefusal");
interface OpenApi {
  paths: Record<string, Record<string, OperationDoc>>;
  components: { schemas: Record<string, Schema> };
}

type Body =
  | { kind: "none" }
  | { kind: "json"; value: unknown }
  | { kind: "raw"; text: string; contentType?: string; encoding?: string };
interface Request {
  path: string;
  query: string;
  headers: Record<string, string>;
  body: Body;
}

const KEY = `fuzz-${randomUUID()}`;
const AUTH = `Bearer ${KEY}`;
const RUNS_PER_OPERATION = 25;
/**
 * A bound on hanging, not a speed: an update (a rollback, a decision) waits for a workflow task
 * of the run, and on a loaded two-core machine one took over 10 s while the slowest of the rest
 * took 3 s. The slowest answer is printed with the other figures.
 */
const ANSWER_WITHIN_MS = 30_000;

let stack: RewindStack;
/** What the API logged as a request's failure, last first: a 500's assertion names its cause. */
const apiErrors: string[] = [];
const apiLogger: Logger = {
  ...silentLogger,
  error(message, fields) {
    apiErrors.unshift(`${message} ${JSON.stringify(fields)}`);
    apiErrors.length = Math.min(apiErrors.length, 5);
  },
};
let mcp: TestMcpServer;
let sink: LoopbackServer;
let doc: OpenApi;
const fixtures = {
  toolset: "",
  gated: "",
  completedRun: "",
  waitingRun: "",
  parkedRun: "",
  workflow: "",
  hookToken: "",
};
const created = new Set<string>();
const stats = {
  requests: 0,
  byStatus: new Map<number, number>(),
  byOperation: new Map<string, Map<number, number>>(),
  slowestMs: 0,
};

beforeAll(async () => {
  [stack, mcp, sink] = await Promise.all([
    startRewindStack({
      env: { REWIND_API_KEYS: `${KEY}:fuzz${randomUUID().slice(0, 8)}`, REWIND_SANDBOX_CPU_MS: "500" },
      logger: apiLogger,
    }),
    startMcpServer({ tools: [echoTool()] }),
    startLoopbackServer((req, res) => {
      req.resume();
      res.writeHead(204).end();
    }),
  ]);
  doc = (await (await fetch(`${stack.api.url}/openapi.json`)).json()) as OpenApi;
  const auth = { authorization: AUTH };
  fixtures.toolset = String(
    (await stack.request("POST", "/v1/toolsets", { mcpServers: { tools: { url: mcp.url } } }, auth)).body.id,
  );
  fixtures.gated = String(
    (
      await stack.request(
        "POST",
        "/v1/toolsets",
        { mcpServers: { tools: { url: mcp.url } }, policies: { "tools.echo": { approval: true } } },
        auth,
      )
    ).body.id,
  );
  const start = async (script: string, toolset = fixtures.toolset) => {
    const answer = await stack.request("POST", "/v1/runs", { script, toolset }, auth);
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return String(answer.body.id);
  };
  const tools = 'import { tools, webhook, waitForSignal } from "rewind:tools";\n';
  fixtures.completedRun = await start(
    tools + 'export default async () => (await tools.echo({ message: "fixture" })) !== null;',
  );
  fixtures.waitingRun = await start(
    tools + 'export default async () => { await webhook("ping"); for (;;) await waitForSignal("ping"); };',
  );
  fixtures.parkedRun = await start(
    tools + 'export default async () => tools.echo({ message: "needs approval" });',
    fixtures.gated,
  );
  fixtures.workflow = String(
    (
      await stack.request(
        "POST",
        "/v1/workflows",
        { name: "double", script: "export default async (n: number) => n * 2;" },
        auth,
      )
    ).body.id,
  );
  await waitForRun(stack, fixtures.completedRun, 30_000, auth);
  const hookUrl = await waitFor("the waiting run's webhook URL in its journal", async () => {
    const journal = await stack.request("GET", `/v1/runs/${fixtures.waitingRun}/journal`, undefined, auth);
    const url = (journal.body["entries"] as { result?: { url?: unknown } }[] | undefined)?.[0]?.result?.url;
    return typeof url === "string" ? url : undefined;
  });
  fixtures.hookToken = new URL(hookUrl).searchParams.get("token") ?? "";
  expect(fixtures.hookToken).not.toBe("");
});

afterAll(async () => {
  const auth = { authorization: AUTH };
  for (const id of [...created, fixtures.waitingRun, fixtures.parkedRun]) {
    if (id) await stack?.request("POST", `/v1/runs/${id}/cancel`, undefined, auth).catch(() => undefined);
  }
  console.info(
    `api fuzz: ${stats.requests} requests, statuses ${JSON.stringify(Object.fromEntries([...stats.byStatus].sort(([a], [b]) => a - b)))}, ` +
      `slowest ${stats.slowestMs} ms, runs started and cancelled ${created.size}\n` +
      [...stats.byOperation]
        .map(([op, counts]) => `  ${op}: ${JSON.stringify(Object.fromEntries([...counts].sort(([a], [b]) => a - b)))}`)
        .join("\n"),
  );
  await stack?.stop();
  await mcp?.close();
  await sink?.close();
});

const ODD_SEGMENTS = [
  "..",
  "../",
  "..%2F..%2Fhealthz",
  "%2e%2e",
  "%2e%2e%2fv1%2fruns",
  "%00",
  "a%00b",
  "%ZZ",
  "%",
  "%E0%A4%A",
  "%C0%AF",
  " ",
  "%20",
  "é",
  "%F0%9F%92%A9",
  "__proto__",
  "constructor",
  "-1",
  "0",
  "1.5",
  "1e3",
  "NaN",
  "Infinity",
  "9".repeat(400),
  "x".repeat(10_000),
  `run_${"A".repeat(64)}`,
  `run_${"A".repeat(65)}`,
  `ts_${"0".repeat(64)}`,
  `ts_${"g".repeat(64)}`,
  "wf_x",
  "run_0123456789ABCDEFGHJK",
];
const ODD_VALUES = [
  "",
  "%00",
  "%ZZ",
  "-1",
  "0",
  "1e309",
  "abc",
  "x".repeat(5000),
  "__proto__",
  "[]",
  "{}",
  "true",
  "null",
  "%F0%9F%92%A9",
];

const segment = (valid: string[]): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...valid) },
    { weight: 4, arbitrary: fc.constantFrom(...ODD_SEGMENTS) },
    { weight: 2, arbitrary: fc.string({ maxLength: 40, unit: "grapheme" }).map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
  );

function validPathValues(path: string, name: string): string[] {
  if (name === "seq") return ["1", "2"];
  if (name === "user") return ["ada"];
  if (name === "name") return ["ping"];
  if (name === "runId" || path.startsWith("/v1/runs"))
    return [fixtures.completedRun, fixtures.waitingRun, fixtures.parkedRun];
  if (path.startsWith("/v1/workflows")) return [fixtures.workflow];
  return [fixtures.toolset];
}

const resolve = (schema: Schema): Schema =>
  schema.$ref ? (doc.components.schemas[schema.$ref.replace("#/components/schemas/", "")] ?? {}) : schema;

const loopbackUrls = (): string[] => [
  mcp.url,
  `http://127.0.0.1:${sink.port}/events`,
  "http://127.0.0.1:9/closed",
  "http://[::1]:9/",
  "ftp://127.0.0.1/",
  "not a url",
  "http://127.0.0.1:99999/",
];
const SCRIPTS = [
  "export default async () => 1;",
  "export default async (input: unknown) => input;",
  "",
  'export default async () => { throw new Error("x"); };',
  "export default async (i: { n: number }) => i.x;",
  'import fs from "node:fs";\nexport default async () => fs;',
  "((((",
  "export const x = 1;",
];

/** Values for the fields whose meaning matters: loopback URLs only, scripts that end at once, real ids. */
function special(key: string): fc.Arbitrary<unknown> | undefined {
  switch (key) {
    case "url":
      return fc.constantFrom(...loopbackUrls());
    case "script":
      return fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...SCRIPTS) },
        { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
      );
    case "toolset":
    case "base":
      return fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(fixtures.toolset, `ts_${"0".repeat(64)}`) },
        { weight: 1, arbitrary: fc.string({ maxLength: 70 }) },
      );
    case "secret":
      return fc.oneof(
        fc.constantFrom(`whsec_${Buffer.alloc(24, 7).toString("base64")}`, "whsec_", "whsec_!!"),
        fc.string(),
      );
    case "input":
      return fc.jsonValue({ maxDepth: 3 });
    default:
      return undefined;
  }
}

function fromSchema(raw: Schema, key = "", depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(raw);
  const meaningful = special(key);
  if (meaningful) return meaningful;
  if (depth > 6) return schema.type === "string" ? fc.string({ maxLength: 8 }) : fc.constant({});
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => fromSchema(s, key, depth + 1)));
  if (schema.enum) return fc.constantFrom(...schema.enum);
  switch (schema.type) {
    case "string":
      return schema.pattern
        ? fc.oneof(
            { weight: 4, arbitrary: fc.stringMatching(new RegExp(schema.pattern), { size: "small" }) },
            { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
          )
        : fc.string({ maxLength: 60 });
    case "integer":
      return fc.oneof(
        fc.integer({ min: Math.max(schema.minimum ?? -1000, -1e9), max: Math.min(schema.maximum ?? 1e6, 1e9) }),
        fc.constantFrom(0, -1, Number.MAX_SAFE_INTEGER, 1e21),
      );
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case "boolean":
      return fc.boolean();
    case "array":
      return fc.array(fromSchema(schema.items ?? {}, "", depth + 1), { maxLength: 3 });
    case "object": {
      const properties = Object.entries(schema.properties ?? {});
      // Optional fields are left out more often than not, so that whole valid bodies come up too.
      const required = new Set(schema.required ?? []);
      const record = fc
        .tuple(
          ...properties.map(([k, s]) => {
            const value = fromSchema(s, k, depth + 1).map((v): [string, unknown] => [k, v]);
            return required.has(k)
              ? value
              : fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: value });
          }),
        )
        .map((entries) => Object.fromEntries(entries.filter((e): e is [string, unknown] => e !== undefined)));
      const extra =
        typeof schema.additionalProperties === "object"
          ? fc.dictionary(
              schema.propertyNames
                ? fromSchema(schema.propertyNames, "", depth + 1).map(String)
                : fc.string({ maxLength: 10 }),
              fromSchema(schema.additionalProperties, "", depth + 1),
              { maxKeys: 2 },
            )
          : fc.constant({});
      return fc.tuple(record, extra).map(([a, b]) => ({ ...b, ...a }));
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Unknown fields, a value of the wrong type, a huge string, or a `__proto__` key. */
function mutate(value: unknown): fc.Arbitrary<Body> {
  const asObject =
    typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const keys = Object.keys(asObject);
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant<Body>({ kind: "json", value }) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }))
        .map(([k, v]): Body => ({ kind: "json", value: { ...asObject, [k]: v } })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom("", ...keys), fc.jsonValue({ maxDepth: 2 }))
        .map(([k, v]): Body => ({ kind: "json", value: { ...asObject, [k || "script"]: v } })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom("", ...keys)
        .map((k): Body => ({ kind: "json", value: { ...asObject, [k || "script"]: "x".repeat(600_000) } })),
    },
    {
      weight: 1,
      arbitrary: fc.constant<Body>({
        kind: "raw",
        text: `{"__proto__":{"polluted":"fuzz"},"constructor":{"prototype":{"polluted":"fuzz"}}${keys.length ? "," + JSON.stringify(asObject).slice(1) : "}"}`,
        contentType: "application/json",
      }),
    },
  );
}

const CONTENT_TYPES = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "application/json; charset=utf-16",
  "application/json; charset=koi8-r",
  "application/json; charset=nope",
  "application/vnd.api+json",
  "multipart/form-data; boundary=x",
  "application/json;;;",
  "*/*",
  "",
];
const rawBody: fc.Arbitrary<Body> = fc.oneof(
  fc
    .tuple(
      fc.oneof(
        fc.string({ maxLength: 80 }),
        fc.constantFrom("{", "[1,2", "{'a':1}", "nul", "\u0000", '{"a":}', "1e99999", '"unterminated', '{"a":1}}'),
      ),
      fc.constantFrom(undefined, "application/json"),
    )
    .map(([text, contentType]): Body => (contentType ? { kind: "raw", text, contentType } : { kind: "raw", text })),
  fc
    .tuple(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(...CONTENT_TYPES))
    .map(([v, contentType]): Body => ({ kind: "raw", text: JSON.stringify(v) ?? "null", contentType })),
  fc
    .tuple(fc.uint8Array({ maxLength: 64 }), fc.constantFrom("gzip", "deflate", "br", "x-unknown", "gzip, gzip"))
    .map(([bytes, encoding]): Body => ({
      kind: "raw",
      text: Buffer.from(bytes).toString("latin1"),
      contentType: "application/json",
      encoding,
    })),
);

function bodyFor(op: OperationDoc): fc.Arbitrary<Body> {
  const schema = op.requestBody?.content["application/json"]?.schema;
  const json = fc.jsonValue({ maxDepth: 3 }).map((value): Body => ({ kind: "json", value }));
  if (!schema)
    return fc.oneof(
      { weight: 6, arbitrary: fc.constant<Body>({ kind: "none" }) },
      { weight: 2, arbitrary: json },
      { weight: 2, arbitrary: rawBody },
    );
  return fc.oneof(
    { weight: 6, arbitrary: fromSchema(schema).chain(mutate) },
    { weight: 2, arbitrary: json },
    { weight: 2, arbitrary: rawBody },
    { weight: 1, arbitrary: fc.constant<Body>({ kind: "none" }) },
    // A session's opening, so that the fuzzed headers reach the MCP transport itself.
    ...(speaksJsonRpc(op)
      ? [{ weight: 2, arbitrary: fc.constant<Body>({ kind: "json", value: MCP_INITIALIZE }) }]
      : []),
  );
}

const MCP_INITIALIZE = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "fuzz", version: "1" } },
};

function queryFor(op: OperationDoc): fc.Arbitrary<string> {
  const declared = (op.parameters ?? []).filter((p) => p.in === "query");
  const value = (p: Parameter) =>
    fc.oneof(
      {
        weight: 3,
        arbitrary:
          p.name === "token"
            ? fc.constantFrom(fixtures.hookToken, fixtures.hookToken, fixtures.hookToken.slice(1), "")
            : fromSchema(p.schema).map((v) => String(v)),
      },
      { weight: 1, arbitrary: fc.constantFrom(...ODD_VALUES) },
    );
  /** Present about `percent` % of the time. */
  const sometimes = (arb: fc.Arbitrary<string>, percent: number) =>
    fc.oneof({ weight: 100 - percent, arbitrary: fc.constant(undefined) }, { weight: percent, arbitrary: arb });
  const pairs = declared.map((p) =>
    sometimes(
      value(p).map((v) => `${encodeURIComponent(p.name)}=${encodeURIComponent(v)}`),
      p.name === "token" ? 90 : 50,
    ),
  );
  const unknown = sometimes(
    fc
      .tuple(
        fc.constantFrom("x", "__proto__", "constructor[prototype][x]", "pageSize", "limit", "a[]"),
        fc.constantFrom(...ODD_VALUES),
      )
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`),
    20,
  );
  const raw = sometimes(
    fc.constantFrom("%ZZ=1", "a=%", "&&&", "=", "a=1&a=2", "format=dts&format=prompt", "pageSize=1&pageSize=2"),
    20,
  );
  return fc.tuple(fc.tuple(...pairs), unknown, raw).map(([items, extra, junk]) => {
    const parts = [...items, extra, junk].filter((p): p is string => p !== undefined);
    return parts.length > 0 ? `?${parts.join("&")}` : "";
  });
}

const headersArb: fc.Arbitrary<Record<string, string>> = fc
  .record({
    authorization: fc.oneof(
      { weight: 9, arbitrary: fc.constant(AUTH) },
      { weight: 1, arbitrary: fc.constantFrom("", "Bearer", `Bearer ${KEY}x`, `Basic ${KEY}`, `bearer   ${KEY}`) },
    ),
    "idempotency-key": fc.oneof(
      { weight: 6, arbitrary: fc.constant("") },
      { weight: 2, arbitrary: fc.string({ maxLength: 20 }).map((s) => encodeURIComponent(s)) },
      { weight: 1, arbitrary: fc.constant("k".repeat(300)) },
    ),
    traceparent: fc.constantFrom(
      "",
      "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01",
      "00-00000000000000000000000000000000-0000000000000000-01",
      "zz",
      "00-x-y-z",
      "ff-".repeat(50),
    ),
  })
  .map((h) => Object.fromEntries(Object.entries(h).filter(([, v]) => v !== "")));

/** What an MCP client sends besides: the media types it accepts, a session id (none valid here). */
const jsonRpcHeadersArb: fc.Arbitrary<Record<string, string>> = fc
  .record({
    accept: fc.constantFrom("", "application/json, text/event-stream", "text/event-stream", "application/json"),
    "mcp-session-id": fc.constantFrom("", "", randomUUID(), "x".repeat(300)),
    "mcp-protocol-version": fc.constantFrom("", "2025-11-25", "1999-01-01"),
  })
  .map((h) => Object.fromEntries(Object.entries(h).filter(([, v]) => v !== "")));

function requestFor(template: string, op: OperationDoc): fc.Arbitrary<Request> {
  const names = [...template.matchAll(/\{(\w+)\}/g)].map(([, name]) => name ?? "");
  return fc
    .record({
      segments: fc.tuple(...names.map((name) => segment(validPathValues(template, name)))),
      query: queryFor(op),
      headers: speaksJsonRpc(op)
        ? fc.tuple(headersArb, jsonRpcHeadersArb).map(([a, b]) => ({ ...a, ...b }))
        : headersArb,
      body: bodyFor(op),
    })
    .map(({ segments, query, headers, body }) => {
      let path = template;
      names.forEach((name, i) => {
        path = path.replace(`{${name}}`, segments[i] ?? "");
      });
      return { path, query, headers, body };
    });
}

async function send(
  method: string,
  request: Request,
): Promise<{ status: number; text: string; contentType: string; ms: number }> {
  const headers: Record<string, string> = { ...request.headers };
  let payload: Buffer | undefined;
  if (request.body.kind === "json") {
    headers["content-type"] = "application/json";
    payload = Buffer.from(JSON.stringify(request.body.value) ?? "null");
  } else if (request.body.kind === "raw") {
    if (request.body.contentType) headers["content-type"] = request.body.contentType;
    if (request.body.encoding) headers["content-encoding"] = request.body.encoding;
    payload = Buffer.from(request.body.text, request.body.encoding ? "latin1" : "utf8");
  }
  const started = Date.now();
  const answer = await rawRequest(method, request.path + request.query, headers, payload);
  return { ...answer, ms: Date.now() - started };
}

/** node:http, not fetch: it sends paths, headers and bodies exactly as generated. */
function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
  payload: Buffer | undefined,
): Promise<{ status: number; text: string; contentType: string }> {
  const { hostname, port } = new URL(stack.api.url);
  // node:http refuses to send a path with spaces or characters past Latin-1: those are escaped.
  const sent = path.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: hostname,
        port,
        method,
        path: sent,
        headers: { ...headers, ...(payload ? { "content-length": String(payload.length) } : {}) },
        timeout: ANSWER_WITHIN_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks).toString("utf8"),
            contentType: String(res.headers["content-type"] ?? ""),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${ANSWER_WITHIN_MS} ms`)));
    req.on("error", reject);
    req.end(payload);
  });
}

function checkAnswer(
  method: string,
  request: Request,
  answer: { status: number; text: string; contentType: string; ms: number },
  jsonRpc = false,
): void {
  stats.requests += 1;
  stats.byStatus.set(answer.status, (stats.byStatus.get(answer.status) ?? 0) + 1);
  stats.slowestMs = Math.max(stats.slowestMs, answer.ms);
  const what = `${method} ${request.path.slice(0, 200)}${request.query.slice(0, 200)} ${JSON.stringify(request.body).slice(0, 300)} → ${answer.status} ${answer.text.slice(0, 300)}`;
  expect(answer.status, what).toBeGreaterThanOrEqual(200);
  expect(
    answer.status,
    answer.status >= 500 ? `${what}\nthe API logged: ${apiErrors[0] ?? "nothing"}` : what,
  ).toBeLessThan(500);
  expect(answer.ms, what).toBeLessThan(ANSWER_WITHIN_MS);
  if (answer.status >= 400) {
    expect(answer.contentType, what).toMatch(/^application\/json/);
    const parsed = JSON.parse(answer.text) as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown } };
    const rpc = jsonRpc && parsed.jsonrpc === "2.0";
    expect(typeof parsed.error?.code, what).toBe(rpc ? "number" : "string");
    expect(typeof parsed.error?.message, what).toBe("string");
  }
  expect(({} as Record<string, unknown>)["polluted"], what).toBeUndefined();
}

/** A run a fuzzed request started is cancelled at once: nothing generated may keep running. */
async function cancelStarted(answer: { status: number; text: string; contentType: string }): Promise<void> {
  if ((answer.status !== 200 && answer.status !== 201) || !answer.contentType.startsWith("application/json")) return;
  const id = (JSON.parse(answer.text) as { id?: unknown }).id;
  if (typeof id !== "string" || !id.startsWith("run_") || Object.values(fixtures).includes(id)) return;
  created.add(id);
  await stack.request("POST", `/v1/runs/${id}/cancel`, undefined, { authorization: AUTH });
}

describe("every operation of the OpenAPI document, fuzzed", () => {
  it("lists the operations it fuzzes", () => {
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((m) => `${m} ${path}`),
    );
    expect(operations.length).toBeGreaterThanOrEqual(22);
  });

  it("answers every generated request within 30 s, never with a 5xx, and with {error: {code, message}} for a 4xx", async () => {
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const counts = new Map<number, number>();
        stats.byOperation.set(`${method.toUpperCase()} ${template}`, counts);
        await fc.assert(
          fc.asyncProperty(requestFor(template, op), async (request) => {
            const answer = await send(method.toUpperCase(), request);
            counts.set(answer.status, (counts.get(answer.status) ?? 0) + 1);
            checkAnswer(method.toUpperCase(), request, answer, speaksJsonRpc(op));
            await cancelStarted(answer);
          }),
          { numRuns: RUNS_PER_OPERATION, endOnFailure: true },
        );
      }
    }
  }, 240_000);

  it("answers unknown routes and methods with a 404 in the same shape", async () => {
    const methods = fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS");
    const paths = fc.oneof(
      fc.constantFrom(
        "/",
        "/v1",
        "/v1/",
        "/v2/runs",
        "/v1/runs/",
        "/v1/hooks",
        "/openapi.yaml",
        "/v1/runs/x/y/z",
        "//v1//runs",
        "/v1/toolsets/../../etc/passwd",
      ),
      fc.webPath(),
    );
    await fc.assert(
      fc.asyncProperty(methods, paths, headersArb, async (method, path, headers) => {
        const request: Request = {
          path: path.startsWith("/") ? path : `/${path}`,
          query: "",
          headers,
          body: { kind: "none" },
        };
        const answer = await send(method, request);
        checkAnswer(method, request, answer);
      }),
      { numRuns: 60, endOnFailure: true },
    );
  });
});

describe("cancellation at any moment", () => {
  it("ends a run cancelled at a random moment after its start as cancelled, without failing a workflow task", async () => {
    const auth = { authorization: AUTH };
    const scripts = [
      {
        script: 'import { tools } from "rewind:tools";\nexport default async () => tools.echo({ message: "parks" });',
        toolset: fixtures.gated,
      },
      { script: 'import { sleep } from "rewind:tools";\nexport default async () => { await sleep("1h"); };' },
      {
        script:
          'import { webhook, waitForSignal } from "rewind:tools";\nexport default async () => { await webhook("w"); return waitForSignal("w"); };',
      },
      {
        script:
          'import { tools } from "rewind:tools";\nexport default async () => Promise.all([1, 2, 3].map((n) => tools.echo({ message: String(n) })));',
        toolset: fixtures.toolset,
      },
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...scripts),
        fc.oneof(
          { weight: 3, arbitrary: fc.integer({ min: 0, max: 40 }) },
          { weight: 1, arbitrary: fc.integer({ min: 0, max: 300 }) },
        ),
        async (body, delayMs) => {
          const started = await stack.request("POST", "/v1/runs", body, auth);
          expect(started.status).toBe(201);
          const id = String(started.body.id);
          created.add(id);
          // Not a wait for something to happen: the generated moment of the cancel.
          await new Promise((r) => setTimeout(r, delayMs));
          expect((await stack.request("POST", `/v1/runs/${id}/cancel`, undefined, auth)).status).toBe(200);
          const ended = await waitForRun(stack, id, 15_000, auth);
          expect(["cancelled", "completed"]).toContain(ended.status);
          const history = await stack.client.workflow.getHandle(id).fetchHistory();
          // The server itself fails a task with UnhandledCommand when the cancel arrives as the run
          // completes (the worker then sees the cancel); any other failed task is the worker's fault.
          const failures = (history.events ?? [])
            .map((e) => e.workflowTaskFailedEventAttributes?.failure?.message)
            .filter((m) => m !== undefined && m !== null);
          expect(
            failures.filter((m) => m !== "UnhandledCommand"),
            `${body.script} cancelled after ${delayMs} ms`,
          ).toEqual([]);
        },
      ),
      { numRuns: 16, endOnFailure: true },
    );
  });
});

describe("decisions racing the end of their run", () => {
  it("answers approve, reject and resume sent while the run completes with 409, never 500", async () => {
    const auth = { authorization: AUTH };
    const parks = {
      script: 'import { tools } from "rewind:tools";\nexport default async () => tools.echo({ message: "race" });',
      toolset: fixtures.gated,
    };
    const answers = new Map<number, number>();
    for (let round = 0; round < 3; round++) {
      const id = String((await stack.request("POST", "/v1/runs", parks, auth)).body.id);
      created.add(id);
      await waitFor(
        `run ${id} to park`,
        async () => (await stack.request("GET", `/v1/runs/${id}`, undefined, auth)).body,
        { intervalMs: 50, until: (body) => body.status === "parked" },
      );
      expect((await stack.request("POST", `/v1/runs/${id}/calls/1/approve`, undefined, auth)).status).toBe(200);
      // Until the run has completed, keep deciding a call that is not waiting: 409 every time.
      let i = 0;
      await waitFor(
        `run ${id} to complete while its decisions are refused`,
        async () => {
          const answer = await stack.request(
            "POST",
            `/v1/runs/${id}/calls/2/${["approve", "reject", "resume"][i % 3] ?? "approve"}`,
            undefined,
            auth,
          );
          answers.set(answer.status, (answers.get(answer.status) ?? 0) + 1);
          expect([answer.status, answer.body.error?.code], `round ${round}, request ${i}`).toEqual([409, "conflict"]);
          i++;
          return answer.body.error?.message.includes("is completed");
        },
        { intervalMs: 0 },
      );
    }
    expect([...answers.keys()]).toEqual([409]);
  });
});

describe("page tokens", () => {
  it("answers a pageToken it never gave with a 400 within 5 s, and pages on with one it gave", async () => {
    const auth = { authorization: AUTH };
    for (const token of ["%ZZ", Buffer.from("not a token").toString("base64url")]) {
      const started = Date.now();
      const answer = await stack.request("GET", `/v1/runs?pageToken=${encodeURIComponent(token)}`, undefined, auth);
      expect([answer.status, answer.body.error?.code], token).toEqual([400, "badRequest"]);
      expect(Date.now() - started).toBeLessThan(5_000);
    }
    const first = await waitFor(
      "a first page with a next page token",
      () => stack.request("GET", "/v1/runs?pageSize=1", undefined, auth),
      { timeoutMs: 10_000, intervalMs: 200, until: (page) => Boolean(page.body.nextPageToken) },
    );
    const second = await stack.request(
      "GET",
      `/v1/runs?pageSize=1&pageToken=${String(first.body.nextPageToken)}`,
      undefined,
      auth,
    );
    expect(second.status).toBe(200);
    expect(second.body.runs?.[0]?.id).not.toBe(first.body.runs?.[0]?.id);
  });
});

describe("oversized bodies", () => {
  // Just over the 17 MiB a body may be.
  const threeMb = Buffer.alloc(18 * 1024 * 1024, 0x61);
  const bodyRoutes = (): [string, string][] =>
    Object.entries(doc.paths).flatMap(([template, item]) =>
      Object.entries(item)
        .filter(([, op]) => op.requestBody !== undefined || template.includes("hooks"))
        .map(([method]): [string, string] => [
          method.toUpperCase(),
          template
            .replace("{id}", template.startsWith("/v1/runs") ? fixtures.completedRun : fixtures.toolset)
            .replace("{seq}", "1")
            .replace("{user}", "ada")
            .replace("{runId}", fixtures.waitingRun)
            .replace("{name}", "ping") + (template.includes("hooks") ? `?token=${fixtures.hookToken}` : ""),
        ]),
    );

  it("refuses 18 MB, sent or inflated from a small gzip body, on every route that takes a body: 413 within 2 s with a key, 401 without one (but for webhooks)", async () => {
    const bomb = gzipSync(Buffer.concat([Buffer.from('{"script":"'), threeMb, Buffer.from('"}')]));
    expect(bomb.length).toBeLessThan(40_000);
    for (const [method, path] of bodyRoutes()) {
      for (const headers of [{ authorization: AUTH }, {}] as Record<string, string>[]) {
        const sent = await send(method, {
          path,
          query: "",
          headers,
          body: { kind: "raw", text: `{"script":"${threeMb.toString("latin1")}"}`, contentType: "application/json" },
        });
        const inflated = await send(method, {
          path,
          query: "",
          headers,
          body: { kind: "raw", text: bomb.toString("latin1"), contentType: "application/json", encoding: "gzip" },
        });
        for (const answer of [sent, inflated]) {
          expect(answer.status, `${method} ${path}`).toBe(
            headers.authorization || path.startsWith("/v1/hooks") ? 413 : 401,
          );
          expect(answer.ms, `${method} ${path}`).toBeLessThan(2_000);
          checkAnswer(method, { path, query: "", headers, body: { kind: "none" } }, answer);
        }
      }
    }
    // Four 18 MB requests for each of some thirty routes: a loaded machine needs more than the default minute.
  }, 300_000);
});
