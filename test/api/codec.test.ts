/**
 * The codec routes the Temporal Web UI calls (Temporal's Codec Server protocol): a 1 MB tool
 * result is kept in the payload store and history holds a reference; posted to
 * `/v1/codec/decode` in the protocol's JSON form it comes back as the payload it names, while
 * other payloads pass unchanged, encode is the identity, a reference that names nothing is a 4xx
 * that says so, the routes need an API key like the rest, only the Temporal namespace the API
 * serves is accepted, and the browser's CORS preflight is answered for the UI's origin only.
 */
import { createHash, randomUUID } from "node:crypto";
import type { Payload } from "@temporalio/common";
import {
  encodeReferencePayload,
  isReferencePayload,
} from "@temporalio/common/lib/internal-non-workflow/extstore-helpers.js";
import { StorageDriverClaim } from "@temporalio/common";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { resolvePayload } from "../../src/payloads/external-storage.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";

const KEY = `codec-${randomUUID()}`;
const auth = { authorization: `Bearer ${KEY}` };
const UI_ORIGIN = "http://127.0.0.1:18233";
const TEXT = createHash("sha256")
  .update("codec")
  .digest("hex")
  .repeat(1_000_000 / 64 + 1)
  .slice(0, 1_000_000);

interface PayloadJson {
  metadata?: Record<string, string>;
  data?: string;
  [key: string]: unknown;
}

let stack: RewindStack;
let server: TestMcpServer;
/** The activity result of a run whose tool answered TEXT, as history holds it. */
let reference: Payload;

const toJson = (payload: Payload): PayloadJson => ({
  metadata: Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString("base64")]),
  ),
  data: Buffer.from(payload.data ?? new Uint8Array()).toString("base64"),
  // As the server writes a reference in JSON (int64 as a string).
  ...(payload.externalPayloads?.length
    ? { externalPayloads: payload.externalPayloads.map((p) => ({ sizeBytes: String(p.sizeBytes) })) }
    : {}),
});
const dataOf = (payload: PayloadJson | undefined): unknown =>
  JSON.parse(Buffer.from(payload?.data ?? "", "base64").toString("utf8"));

function codec(route: "decode" | "encode", payloads: unknown[], headers: Record<string, string> = auth) {
  return stack.request(
    "POST",
    `/v1/codec/${route}`,
    { payloads },
    { "x-namespace": stack.config.temporal.namespace, ...headers },
  );
}

beforeAll(async () => {
  [stack, server] = await Promise.all([
    startRewindStack({
      env: { REWIND_API_KEYS: `${KEY}:codec${randomUUID().slice(0, 8)}`, REWIND_CODEC_CORS_ORIGINS: UI_ORIGIN },
    }),
    startMcpServer({
      tools: [
        {
          name: "big",
          inputSchema: { type: "object" },
          handler: async () => ({ content: [{ type: "text", text: TEXT }] }),
        },
      ],
    }),
  ]);
  const toolset = await stack.request("POST", "/v1/toolsets", { mcpServers: { svc: { url: server.url } } }, auth);
  expect(toolset.status, JSON.stringify(toolset.body)).toBe(201);
  const script = 'import { svc } from "rewind:tools";\nexport default async () => String(await svc.big({})).length;';
  const started = await stack.request("POST", "/v1/runs", { script, toolset: toolset.body.id }, auth);
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const id = String(started.body.id);
  expect(await waitForRun(stack, id, 60_000, auth)).toMatchObject({ status: "completed", result: TEXT.length });
  const history = await stack.client.workflow.getHandle(id).fetchHistory();
  const results = (history.events ?? []).flatMap((e) => e.activityTaskCompletedEventAttributes?.result?.payloads ?? []);
  expect(results).toHaveLength(1);
  reference = results[0] as Payload;
  expect(isReferencePayload(reference)).toBe(true);
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

describe("POST /v1/codec/decode", () => {
  it("answers a stored result's reference with the payload it names, and other payloads unchanged, in order", async () => {
    const original = await resolvePayload(stack.client.options.loadedDataConverter, reference);
    const inline = stack.client.options.loadedDataConverter.payloadConverter.toPayload({ small: "value" }) as Payload;
    const binaryNull = { metadata: { encoding: Buffer.from("binary/null").toString("base64") } };
    const { status, body } = await codec("decode", [toJson(inline), toJson(reference), binaryNull]);
    expect(status, JSON.stringify(body).slice(0, 500)).toBe(200);
    const payloads = body["payloads"] as PayloadJson[];
    expect(payloads).toHaveLength(3);
    expect(payloads[0]).toEqual(toJson(inline));
    expect(payloads[1]).toEqual(toJson(original));
    expect(payloads[2]).toEqual(binaryNull);
    // What the UI shows: the result as JSON, with the tool's whole text in it.
    expect(Buffer.from(payloads[1]?.metadata?.["encoding"] ?? "", "base64").toString()).toBe("json/plain");
    expect(JSON.stringify(dataOf(payloads[1]))).toContain(TEXT);
    expect(dataOf(payloads[1])).toEqual(
      stack.client.options.loadedDataConverter.payloadConverter.fromPayload(original),
    );
    expect(dataOf(payloads[0])).toEqual({ small: "value" });
  });

  it("answers a reference that names nothing with a 4xx saying what is wrong, never a 500", async () => {
    const missing = encodeReferencePayload({
      driverName: "rewind-file",
      claim: new StorageDriverClaim({ sha256: "0".repeat(64) }),
      sizeBytes: 10,
    });
    const notFound = await codec("decode", [toJson(missing)]);
    expect([notFound.status, notFound.body.error?.code]).toEqual([404, "notFound"]);
    expect(notFound.body.error?.message).toMatch(/payloads\[0\].*holds no payload/);

    const bogus = encodeReferencePayload({
      driverName: "rewind-file",
      claim: new StorageDriverClaim({ sha256: "../../etc/passwd" }),
      sizeBytes: 10,
    });
    const badClaim = await codec("decode", [toJson(reference), toJson(bogus)]);
    expect([badClaim.status, badClaim.body.error?.code]).toEqual([400, "badRequest"]);
    expect(badClaim.body.error?.message).toMatch(
      /payloads\[1\].*is not a reference of the payload store "rewind-file"/,
    );

    const otherStore = encodeReferencePayload({
      driverName: "someone-elses-s3",
      claim: new StorageDriverClaim({ key: "k" }),
      sizeBytes: 10,
    });
    const unknownDriver = await codec("decode", [toJson(otherStore)]);
    expect([unknownDriver.status, unknownDriver.body.error?.message]).toEqual([
      400,
      expect.stringMatching(/"someone-elses-s3", which this API is not configured with/),
    ]);

    const garbled = { ...toJson(reference), data: Buffer.from("{not json").toString("base64") };
    const invalid = await codec("decode", [garbled]);
    expect([invalid.status, invalid.body.error?.message]).toEqual([
      400,
      expect.stringMatching(/payloads\[0\] is marked as an External Storage reference but is not a valid one/),
    ]);
  });

  it("refuses bodies that are not Payloads, and another Temporal namespace", async () => {
    expect((await codec("decode", [{ data: "not base64!" }])).status).toBe(400);
    expect((await stack.request("POST", "/v1/codec/decode", { payload: [] }, auth)).status).toBe(400);
    const other = await codec("decode", [toJson(reference)], { ...auth, "x-namespace": "someone-else" });
    expect([other.status, other.body.error?.message]).toEqual([
      400,
      expect.stringMatching(/Temporal namespace "default", not "someone-else"/),
    ]);
    // Without X-Namespace (a script, not the UI): the namespace the API serves.
    expect((await stack.request("POST", "/v1/codec/decode", { payloads: [] }, auth)).body).toEqual({ payloads: [] });
  });
});

describe("POST /v1/codec/encode", () => {
  it("answers the payloads unchanged (Rewind has no codec), references included", async () => {
    const inline = toJson(stack.client.options.loadedDataConverter.payloadConverter.toPayload([1, 2, 3]) as Payload);
    const { status, body } = await codec("encode", [inline, toJson(reference)]);
    expect(status).toBe(200);
    expect(body["payloads"]).toEqual([inline, toJson(reference)]);
  });
});

describe("auth and CORS", () => {
  it("needs an API key, and a 401 is still readable by the UI's origin", async () => {
    for (const route of ["decode", "encode"] as const) {
      const response = await fetch(`${stack.api.url}/v1/codec/${route}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-namespace": "default", origin: UI_ORIGIN },
        body: JSON.stringify({ payloads: [toJson(reference)] }),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get("access-control-allow-origin")).toBe(UI_ORIGIN);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    }
    expect((await codec("decode", [], { authorization: "Bearer wrong-key-0123456789" })).status).toBe(401);
  });

  it("answers the preflight of the UI's origin with the headers the UI sends, credentials allowed", async () => {
    for (const route of ["decode", "encode"] as const) {
      const response = await fetch(`${stack.api.url}/v1/codec/${route}`, {
        method: "OPTIONS",
        headers: {
          origin: UI_ORIGIN,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type,x-namespace,authorization",
        },
      });
      expect(response.status).toBe(204);
      expect(response.headers.get("access-control-allow-origin")).toBe(UI_ORIGIN);
      expect(response.headers.get("access-control-allow-credentials")).toBe("true");
      expect(response.headers.get("access-control-allow-methods")).toContain("POST");
      expect(response.headers.get("access-control-allow-headers")).toBe("Content-Type, X-Namespace, Authorization");
      expect(response.headers.get("vary")).toMatch(/Origin/);
    }
    const decoded = await fetch(`${stack.api.url}/v1/codec/decode`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-namespace": "default", origin: UI_ORIGIN, ...auth },
      body: JSON.stringify({ payloads: [] }),
    });
    expect([decoded.status, decoded.headers.get("access-control-allow-origin")]).toEqual([200, UI_ORIGIN]);
  });

  it("gives any other origin no Access-Control-Allow-Origin", async () => {
    for (const origin of ["http://evil.example", "http://127.0.0.1:18234", "null"]) {
      const preflight = await fetch(`${stack.api.url}/v1/codec/decode`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type,x-namespace",
        },
      });
      expect(preflight.headers.get("access-control-allow-origin"), origin).toBeNull();
      expect(preflight.headers.get("access-control-allow-headers"), origin).toBeNull();
      const post = await fetch(`${stack.api.url}/v1/codec/decode`, {
        method: "POST",
        headers: { "content-type": "application/json", origin, ...auth },
        body: JSON.stringify({ payloads: [] }),
      });
      expect(post.headers.get("access-control-allow-origin"), origin).toBeNull();
    }
    // Other routes have no CORS at all.
    const runs = await fetch(`${stack.api.url}/v1/runs`, { headers: { origin: UI_ORIGIN, ...auth } });
    expect(runs.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("REWIND_CODEC_CORS_ORIGINS", () => {
  it("is a list of origins, normalized; unset leaves the default (the UI's origin) to the API", () => {
    expect(loadConfig({}).api.codecCorsOrigins).toBeUndefined();
    expect(
      loadConfig({ REWIND_CODEC_CORS_ORIGINS: " http://127.0.0.1:8233, https://Temporal.Example.com:443/ " }).api
        .codecCorsOrigins,
    ).toEqual(["http://127.0.0.1:8233", "https://temporal.example.com"]);
  });

  it.each(["*", "127.0.0.1:8233", "http://127.0.0.1:8233/ui", "ftp://example.com", "http://example.com?x=1", "null"])(
    "refuses %j, naming the variable",
    (value) => {
      expect(() => loadConfig({ REWIND_CODEC_CORS_ORIGINS: value })).toThrow(ConfigError);
      expect(() => loadConfig({ REWIND_CODEC_CORS_ORIGINS: value })).toThrow(/^REWIND_CODEC_CORS_ORIGINS /);
    },
  );
});
