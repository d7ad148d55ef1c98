/**
 * The OpenAPI document's contract: it is OpenAPI 3.1, it lists every route the app serves (read
 * from the express app itself, so a new route without a document entry fails here), and real
 * answers of a running stack — successes and errors — validate against the schema the document
 * gives for that route and status.
 */
import { randomUUID } from "node:crypto";
import { StorageDriverClaim } from "@temporalio/common";
import { encodeReferencePayload } from "@temporalio/common/lib/internal-non-workflow/extstore-helpers.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, type ApiDeps } from "../../src/api/index.ts";
import { silentLogger } from "../../src/shared/logger.ts";
import { tableResolver } from "../helpers/http-loopback.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";

interface OpenApiDocument {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      { security?: unknown[]; responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }> }
    >
  >;
  components: { securitySchemes: Record<string, { type: string; scheme?: string }> };
}

const KEY = `contract-${randomUUID()}`;
const auth = { authorization: `Bearer ${KEY}` };
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
let stack: RewindStack;
let server: TestMcpServer;
let doc: OpenApiDocument;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

beforeAll(async () => {
  // Its own namespace: the events endpoint set below concerns no other test file.
  [stack, server] = await Promise.all([
    // example.com, the events endpoint below, is trusted and "resolves" to loopback: no event leaves the machine.
    startRewindStack({
      env: {
        REWIND_API_KEYS: `${KEY}:contract${randomUUID().slice(0, 8)}`,
        REWIND_TRUSTED_TARGETS: "127.0.0.0/8,example.com",
      },
      outbound: { resolve: tableResolver({ "example.com": ["127.0.0.1"] }).resolve },
    }),
    startMcpServer({ tools: [echoTool()] }),
  ]);
  const response = await fetch(`${stack.api.url}/openapi.json`);
  expect(response.status).toBe(200);
  doc = (await response.json()) as OpenApiDocument;
  ajv.addSchema(doc, "openapi.json");
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

/** Sends a request and checks the answer against the document's schema for its route and status. */
async function call(
  method: string,
  template: string,
  route: string,
  body?: unknown,
  headers: Record<string, string> = auth,
) {
  const { status, body: answer } = await stack.request(method, route, body, headers);
  const response = doc.paths[template]?.[method.toLowerCase()]?.responses[String(status)];
  expect(response, `${method} ${template} does not document status ${status}: ${JSON.stringify(answer)}`).toBeDefined();
  const ref = response?.content?.["application/json"]?.schema.$ref ?? "";
  const validate = ajv.getSchema(`openapi.json${ref}`);
  expect(validate, `no schema ${ref}`).toBeDefined();
  expect(
    validate?.(answer),
    `${method} ${route} → ${status} ${JSON.stringify(answer)}: ${ajv.errorsText(validate?.errors)}`,
  ).toBe(true);
  return { status, body: answer };
}

function servedRoutes(): string[] {
  const app = createApp({ apiKeys: new Map(), logger: silentLogger } as unknown as ApiDeps);
  interface Layer {
    route?: { path: string; methods: Record<string, boolean> };
    handle?: { stack?: Layer[] };
  }
  const walk = (layers: Layer[]): string[] =>
    layers.flatMap((layer) =>
      layer.route
        ? Object.keys(layer.route.methods).map((m) => `${m} ${layer.route?.path.replace(/:(\w+)/g, "{$1}")}`)
        : walk(layer.handle?.stack ?? []),
    );
  return walk((app as unknown as { router: { stack: Layer[] } }).router.stack).sort();
}

describe("GET /openapi.json", () => {
  it("is OpenAPI 3.1 with a bearer scheme, served without a key, and lists every route the app serves", () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.components.securitySchemes["bearer"]).toEqual(
      expect.objectContaining({ type: "http", scheme: "bearer" }),
    );
    const documented = Object.entries(doc.paths)
      .flatMap(([path, item]) => Object.keys(item).map((m) => `${m} ${path}`))
      .sort();
    expect(documented).toEqual(servedRoutes());
    expect(doc.paths["/v1/hooks/{runId}/{name}"]?.["post"]?.security).toEqual([]);
  });
});

describe("answers match the document", () => {
  it("toolsets: register, show, declarations, credentials, errors", async () => {
    const registered = await call("POST", "/v1/toolsets", "/v1/toolsets", {
      mcpServers: { tools: { url: server.url } },
    });
    expect(registered.status).toBe(201);
    const id = String(registered.body.id);
    expect(
      (await call("POST", "/v1/toolsets", "/v1/toolsets", { mcpServers: { tools: { url: server.url } } })).status,
    ).toBe(200);
    expect(
      (await call("POST", "/v1/toolsets", "/v1/toolsets", { mcpServers: { "no-id": { url: server.url } } })).status,
    ).toBe(400);
    expect((await call("GET", "/v1/toolsets/{id}", `/v1/toolsets/${id}`)).status).toBe(200);
    expect((await call("GET", "/v1/toolsets/{id}", `/v1/toolsets/ts_${"0".repeat(64)}`)).status).toBe(404);
    expect(
      (await call("GET", "/v1/toolsets/{id}/declarations", `/v1/toolsets/${id}/declarations?format=xml`)).status,
    ).toBe(400);
    expect(
      (
        await call(
          "GET",
          "/v1/toolsets/{id}/declarations",
          `/v1/toolsets/${id}/declarations?format=prompt&tools=tools.nope`,
        )
      ).status,
    ).toBe(400);
    expect((await call("GET", "/v1/toolsets/{id}/tools", `/v1/toolsets/${id}/tools?query=echo`)).body).toEqual({
      tools: [expect.objectContaining({ name: "tools.echo" })],
    });
    expect((await call("GET", "/v1/toolsets/{id}/tools", `/v1/toolsets/${id}/tools?limit=2`)).status).toBe(400);
    expect(
      (await call("GET", "/v1/toolsets/{id}/tools", `/v1/toolsets/ts_${"0".repeat(64)}/tools?query=echo`)).status,
    ).toBe(404);
    const prompt = await fetch(`${stack.api.url}/v1/toolsets/${id}/declarations?format=prompt`, { headers: auth });
    expect([prompt.status, prompt.headers.get("content-type")]).toEqual([200, "text/plain; charset=utf-8"]);
    const credentials = await call("PUT", "/v1/toolsets/{id}/credentials", `/v1/toolsets/${id}/credentials`, {
      mcpServers: { tools: { headers: { "x-token": "t" } } },
    });
    expect(credentials.status).toBe(200);
    expect(
      (
        await call(
          "PUT",
          "/v1/end-users/{user}/toolsets/{id}/credentials",
          `/v1/end-users/ada/toolsets/${id}/credentials`,
          { mcpServers: {} },
        )
      ).status,
    ).toBe(200);
  });

  it("the MCP route: the API's refusals before a session, the session's JSON-RPC ones after", async () => {
    const toolset = String(
      (await call("POST", "/v1/toolsets", "/v1/toolsets", { mcpServers: { tools: { url: server.url } } })).body.id,
    );
    const template = "/v1/toolsets/{id}/mcp";
    const ping = { jsonrpc: "2.0", id: 1, method: "ping" };
    expect((await call("POST", template, `/v1/toolsets/${toolset}/mcp`, ping, {})).status).toBe(401);
    expect((await call("POST", template, `/v1/toolsets/ts_${"0".repeat(64)}/mcp`, ping)).body.error?.code).toBe(
      "notFound",
    );
    expect((await call("POST", template, `/v1/toolsets/${toolset}/mcp?endUser=`, ping)).status).toBe(400);
    const withoutSession = await call("POST", template, `/v1/toolsets/${toolset}/mcp`, ping);
    expect([withoutSession.status, withoutSession.body["jsonrpc"]]).toEqual([400, "2.0"]);
    const unknownSession = await call("DELETE", template, `/v1/toolsets/${toolset}/mcp`, undefined, {
      ...auth,
      "mcp-session-id": "0f2e6a52-3f4c-4d1e-9a8b-1c2d3e4f5a6b",
    });
    expect([unknownSession.status, unknownSession.body["jsonrpc"]]).toEqual([404, "2.0"]);
  });

  it("runs: start, read, journal, list, decisions and cancel, with their errors", async () => {
    const toolset = String(
      (await call("POST", "/v1/toolsets", "/v1/toolsets", { mcpServers: { tools: { url: server.url } } })).body.id,
    );
    expect((await call("POST", "/v1/runs", "/v1/runs", { script: "export default async () => 1;" }, {})).status).toBe(
      401,
    );
    const script =
      'import { tools } from "rewind:tools";\nexport default async (input: { n: number }) => { await tools.echo({ message: "hi" }); return input.n; };';
    const started = await call("POST", "/v1/runs", "/v1/runs", { script, toolset, input: { n: 3 } });
    expect(started.status).toBe(201);
    const id = String(started.body.id);
    expect(await waitForRun(stack, id, 30_000, auth)).toMatchObject({ status: "completed", result: 3 });
    expect((await call("GET", "/v1/runs/{id}", `/v1/runs/${id}`)).body.result).toBe(3);
    expect((await call("GET", "/v1/runs/{id}/journal", `/v1/runs/${id}/journal`)).body["entries"]).toHaveLength(1);
    expect((await call("GET", "/v1/runs/{id}/journal", `/v1/runs/${id}/journal?limit=0`)).status).toBe(400);
    expect((await call("GET", "/v1/runs", "/v1/runs?pageSize=5")).status).toBe(200);
    expect((await call("GET", "/v1/runs", "/v1/runs?pageSize=0")).status).toBe(400);
    expect((await call("GET", "/v1/runs/{id}", "/v1/runs/run_0123456789ABCDEFGHJK")).status).toBe(404);
    expect((await call("POST", "/v1/runs", "/v1/runs", { script: "" })).status).toBe(400);
    const typeError = await call("POST", "/v1/runs", "/v1/runs", {
      script: "export default async (i: { n: number }) => i.x;",
    });
    expect(typeError.status).toBe(422);
    expect((await call("POST", "/v1/runs/{id}/calls/{seq}/approve", `/v1/runs/${id}/calls/1/approve`)).status).toBe(
      409,
    );
    expect(
      (await call("POST", "/v1/runs/{id}/calls/{seq}/reject", `/v1/runs/${id}/calls/1/reject`, { reason: 5 })).status,
    ).toBe(400);
    expect((await call("POST", "/v1/runs/{id}/calls/{seq}/resume", `/v1/runs/${id}/calls/1/resume`)).status).toBe(409);
    const elicitation = "/v1/runs/{id}/calls/{seq}/elicitation";
    expect((await call("POST", elicitation, `/v1/runs/${id}/calls/1/elicitation`, { action: "decline" })).status).toBe(
      409,
    );
    expect((await call("POST", elicitation, `/v1/runs/${id}/calls/1/elicitation`, { action: "accept" })).status).toBe(
      400,
    );
    expect(
      (await call("POST", elicitation, "/v1/runs/run_0123456789ABCDEFGHJK/calls/1/elicitation", { action: "cancel" }))
        .status,
    ).toBe(404);
    expect((await call("POST", "/v1/runs/{id}/cancel", `/v1/runs/${id}/cancel`)).body.status).toBe("completed");
    expect(
      (await call("POST", "/v1/runs/{id}/fork", "/v1/runs/run_0123456789ABCDEFGHJK/fork", { script })).status,
    ).toBe(404);
    const fork = await call("POST", "/v1/runs/{id}/fork", `/v1/runs/${id}/fork`, { script, input: { n: 4 } });
    expect(fork.status).toBe(201);
    expect(await waitForRun(stack, String(fork.body.id), 30_000, auth)).toMatchObject({
      status: "completed",
      result: 4,
    });
    expect((await call("GET", "/v1/runs/{id}/journal", `/v1/runs/${String(fork.body.id)}/journal`)).status).toBe(200);
    const saveRoute = "/v1/runs/{id}/save";
    expect(
      (await call("POST", saveRoute, `/v1/runs/${id}/save`, { name: "echoN", description: "Echoes" })).status,
    ).toBe(201);
    expect(
      (await call("POST", saveRoute, `/v1/runs/${id}/save`, { name: "echoN", description: "Echoes" })).status,
    ).toBe(200);
    expect((await call("POST", saveRoute, `/v1/runs/${id}/save`, { name: "echo-n" })).status).toBe(400);
    expect((await call("POST", saveRoute, "/v1/runs/run_0123456789ABCDEFGHJK/save", { name: "x" })).status).toBe(404);
    const httpOnly = String(
      (await call("POST", "/v1/toolsets", "/v1/toolsets", { http: { allowedHosts: ["example.com"] } })).body.id,
    );
    const misfit = await call("POST", saveRoute, `/v1/runs/${id}/save`, { name: "echoN", toolset: httpOnly });
    expect(misfit.body.error).toMatchObject({ code: "typeCheckFailed" });
    expect((await call("POST", "/v1/hooks/{runId}/{name}", `/v1/hooks/${id}/done?token=nope`, {}, {})).status).toBe(
      404,
    );
  });

  it("workflows, events endpoint and health", async () => {
    const stored = await call("POST", "/v1/workflows", "/v1/workflows", {
      name: "double",
      script: "export default async (n: number) => n * 2;",
    });
    expect(stored.status).toBe(201);
    expect((await call("GET", "/v1/workflows/{id}", `/v1/workflows/${String(stored.body.id)}`)).body["name"]).toBe(
      "double",
    );
    expect((await call("GET", "/v1/workflows/{id}", "/v1/workflows/wf_nope")).status).toBe(404);
    expect(
      (
        await call("POST", "/v1/workflows", "/v1/workflows", {
          name: "bad",
          script: "export default async (n: number) => n.x;",
        })
      ).status,
    ).toBe(422);
    expect((await call("GET", "/v1/events/endpoint", "/v1/events/endpoint")).status).toBe(404);
    expect((await call("PUT", "/v1/events/endpoint", "/v1/events/endpoint", { url: "ftp://example.com" })).status).toBe(
      400,
    );
    expect(
      (await call("PUT", "/v1/events/endpoint", "/v1/events/endpoint", { url: "http://10.0.0.1/events" })).body[
        "error"
      ],
    ).toMatchObject({ code: "targetNotAllowed" });
    const endpoint = await call("PUT", "/v1/events/endpoint", "/v1/events/endpoint", {
      url: "https://example.com/rewind-events",
    });
    expect(String(endpoint.body["secret"])).toMatch(/^whsec_/);
    expect((await call("GET", "/v1/events/endpoint", "/v1/events/endpoint")).body).toEqual({
      url: "https://example.com/rewind-events",
    });
    expect((await call("GET", "/healthz", "/healthz", undefined, {})).body).toEqual({ ok: true });
  });

  it("codec: decode and encode, with their errors", async () => {
    const payload = {
      metadata: { encoding: Buffer.from("json/plain").toString("base64") },
      data: Buffer.from("1").toString("base64"),
    };
    expect((await call("POST", "/v1/codec/decode", "/v1/codec/decode", { payloads: [payload] })).body).toEqual({
      payloads: [payload],
    });
    expect((await call("POST", "/v1/codec/encode", "/v1/codec/encode", { payloads: [payload] })).body).toEqual({
      payloads: [payload],
    });
    expect((await call("POST", "/v1/codec/decode", "/v1/codec/decode", { payloads: [{ data: "!" }] })).status).toBe(
      400,
    );
    expect((await call("POST", "/v1/codec/encode", "/v1/codec/encode", { payloads: "x" })).status).toBe(400);
    const missing = encodeReferencePayload({
      driverName: "rewind-file",
      claim: new StorageDriverClaim({ sha256: "0".repeat(64) }),
      sizeBytes: 1,
    });
    const reference = {
      metadata: Object.fromEntries(
        Object.entries(missing.metadata ?? {}).map(([k, v]) => [
          k,
          Buffer.from(v ?? new Uint8Array()).toString("base64"),
        ]),
      ),
      data: Buffer.from(missing.data ?? new Uint8Array()).toString("base64"),
    };
    expect((await call("POST", "/v1/codec/decode", "/v1/codec/decode", { payloads: [reference] })).status).toBe(404);
    expect((await call("POST", "/v1/codec/decode", "/v1/codec/decode", { payloads: [] }, {})).status).toBe(401);
  });
});
