/**
 * A run is one trace: its root span, a span per call under it, a span per attempt under its
 * call; and the W3C traceparent reaches MCP servers (`_meta` and the `traceparent` header), host tools (`ctx.traceparent`)
 * and the http tool's requests, so a tool's own spans join the run's trace. A caller's
 * traceparent on POST /v1/runs makes the run part of the caller's trace. Spans follow
 * OpenTelemetry's conventions (MCP, GenAI tool calls, HTTP clients), their names never carry a
 * run id or a seq, and a run that waits (parked for approval) is in its trace while it waits.
 */
import { randomUUID } from "node:crypto";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import packageJson from "../../package.json" with { type: "json" };
import { createHostToolWorker, type HostToolWorker } from "../../src/sdk/index.ts";
import { callSpanId, parseTraceparent } from "../../src/shared/trace-context.ts";
import { startLoopbackServer, tableResolver, type LoopbackServer } from "../helpers/http-loopback.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool, failingTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";

const exporter = new InMemorySpanExporter();
let stack: RewindStack;
let server: TestMcpServer;
let site: LoopbackServer;
let host: HostToolWorker;
let hostRunning: Promise<void>;
let toolset: string;
const hostTraceparents: string[] = [];
const siteRequests: { traceparent: string; url: string }[] = [];
const taskQueue = `trace-host-${randomUUID()}`;

beforeAll(async () => {
  site = await startLoopbackServer((req, res) => {
    siteRequests.push({ traceparent: String(req.headers["traceparent"] ?? ""), url: req.url ?? "" });
    res.writeHead(200).end("{}");
  });
  stack = await startRewindStack({
    spanExporter: exporter,
    httpTool: { allowLoopbackForTests: true, resolve: tableResolver({ "api.test": ["127.0.0.1"] }).resolve },
  });
  server = await startMcpServer({ tools: [echoTool(), failingTool("no such ticket"), echoTool("create_ticket")] });
  host = await createHostToolWorker({
    address: stack.address,
    taskQueue,
    tools: {
      "harness.ping": async (_args, ctx) => {
        hostTraceparents.push(ctx.traceparent ?? "");
        return { pong: true };
      },
    },
  });
  hostRunning = host.run();
  toolset = await registerToolset(stack, {
    mcpServers: { svc: { url: server.url } },
    hostTools: { harness: { taskQueue, tools: { ping: { inputSchema: { type: "object" } } } } },
    http: { allowedHosts: [`api.test:${site.port}`] },
    policies: { "svc.create_ticket": { approval: true } },
  });
});
afterAll(async () => {
  await host?.shutdown();
  await hostRunning;
  await stack?.stop();
  await server?.close();
  await site?.close();
});

const ofRun = (id: string) => exporter.getFinishedSpans().filter((s) => s.attributes["rewind.run.id"] === id);

/** The run's spans once `ready` holds of them (spans leave the worker as the run goes). */
function spansOf(id: string, ready: (spans: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> {
  return waitFor(`run ${id}'s spans to be complete`, () => ofRun(id), {
    timeoutMs: 10_000,
    until: ready,
    shown: (spans) => spans.map((s) => s.name),
  });
}

const named = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const one = (spans: ReadableSpan[], name: string): ReadableSpan => {
  const found = named(spans, name);
  expect(found, `one span named ${name}`).toHaveLength(1);
  return found[0] as ReadableSpan;
};

describe("traces", () => {
  it("make the run one trace, with call and attempt spans, and carry traceparent to every tool", async () => {
    const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const callerSpan = "00f067aa0ba902b7";
    const started = await stack.request(
      "POST",
      "/v1/runs",
      {
        toolset,
        script: `import { svc, harness } from "rewind:tools";\nexport default async () => { await Promise.all([svc.echo({ message: "x" }), harness.ping({})]); await fetch("http://api.test:${site.port}/items?api_key=s3cret&page=2"); return 1; };`,
      },
      { traceparent: `00-${callerTrace}-${callerSpan}-01` },
    );
    const id = String(started.body.id);
    expect((await waitForRun(stack, id)).status).toBe("completed");
    const spans = await spansOf(id, (s) => named(s, "rewind.run.end").length > 0 && named(s, "GET").length > 0);
    for (const span of spans) expect(span.spanContext().traceId).toBe(callerTrace);

    const run = one(spans, "rewind.run");
    expect(run.parentSpanContext?.spanId).toBe(callerSpan);
    expect(one(spans, "rewind.run.end").parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    const calls = spans.filter(
      (s) => s.attributes["gen_ai.operation.name"] === "execute_tool" && s.kind === SpanKind.INTERNAL,
    );
    expect(calls.map((s) => s.name).sort()).toEqual([
      "execute_tool harness.ping",
      "execute_tool http.fetch",
      "execute_tool svc.echo",
    ]);
    for (const call of calls) expect(call.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    expect(one(spans, "execute_tool harness.ping").attributes).toMatchObject({
      "gen_ai.tool.name": "harness.ping",
      "rewind.tool.kind": "host",
      "rewind.call.outcome": "ok",
    });
    const attempts = spans.filter((s) => s.kind === SpanKind.CLIENT);
    expect(attempts.map((s) => s.name).sort()).toEqual(["GET", "tools/call echo"]);
    for (const attempt of attempts)
      expect(calls.map((c) => c.spanContext().spanId)).toContain(attempt.parentSpanContext?.spanId);
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain('"x"');

    const mcpCall = server.calls.find((c) => c.name === "echo");
    const fromServer = parseTraceparent(String(mcpCall?.meta["traceparent"]));
    expect(fromServer?.traceId).toBe(callerTrace);
    expect(one(spans, "tools/call echo").spanContext().spanId).toBe(fromServer?.spanId);
    // The same context in the W3C header too, for a server's ordinary HTTP instrumentation.
    expect(mcpCall?.headers["traceparent"]).toBe(mcpCall?.meta["traceparent"]);
    expect(parseTraceparent(hostTraceparents[0])?.traceId).toBe(callerTrace);
    expect(parseTraceparent(siteRequests[0]?.traceparent)?.traceId).toBe(callerTrace);
  }, 60_000);

  it("name an MCP attempt `tools/call {tool}` with the MCP and GenAI attributes", async () => {
    const id = await startRun(stack, {
      toolset,
      script: `import { svc } from "rewind:tools";\nexport default async () => svc.echo({ message: "hi" });`,
    });
    expect((await waitForRun(stack, id)).status).toBe("completed");
    const spans = await spansOf(id, (s) => named(s, "tools/call echo").length > 0);
    const attempt = one(spans, "tools/call echo");
    expect(attempt.kind).toBe(SpanKind.CLIENT);
    expect(attempt.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(attempt.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "echo",
      "network.transport": "tcp",
      "network.protocol.name": "http",
      "server.address": "127.0.0.1",
      "server.port": Number(new URL(server.url).port),
      "rewind.run.id": id,
      "rewind.call.seq": 1,
      "rewind.call.attempt": 1,
      "rewind.tool": "svc.echo",
    });
    expect(attempt.attributes["mcp.session.id"]).toEqual(expect.any(String));
    expect(attempt.attributes["mcp.protocol.version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(attempt.attributes["jsonrpc.request.id"]).toMatch(/^\d+$/);
    expect(attempt.attributes["error.type"]).toBeUndefined();
  }, 60_000);

  it("mark a tool's own error `error.type: tool_error` on the attempt and the call's code on the call", async () => {
    const script = `import { svc, ToolError } from "rewind:tools";\nexport default async () => { try { await svc.fail({}); } catch (e) { return e instanceof ToolError ? e.code : "?"; } };`;
    const id = await startRun(stack, { toolset, script });
    const ended = await waitForRun(stack, id);
    expect(ended.status).toBe("completed");
    const spans = await spansOf(
      id,
      (s) => named(s, "execute_tool svc.fail").length > 0 && named(s, "tools/call fail").length > 0,
    );
    const attempt = one(spans, "tools/call fail");
    expect(attempt.attributes["error.type"]).toBe("tool_error");
    expect(attempt.status.code).toBe(SpanStatusCode.ERROR);
    const call = one(spans, "execute_tool svc.fail");
    expect(call.attributes).toMatchObject({
      "error.type": "toolFailed",
      "rewind.call.outcome": "toolFailed",
      "gen_ai.tool.name": "svc.fail",
      "rewind.tool.kind": "mcp",
    });
    expect(call.status.code).toBe(SpanStatusCode.ERROR);
  }, 60_000);

  it("name an http attempt by its method, with the HTTP client attributes and no query secrets", async () => {
    const script = `export default async () => (await fetch("http://api.test:${site.port}/v1/items?api_key=s3cret&page=2", { method: "POST", body: "{}" })).status;`;
    const id = await startRun(stack, { toolset, script });
    expect((await waitForRun(stack, id)).status).toBe("completed");
    const spans = await spansOf(id, (s) => named(s, "POST").length > 0);
    const attempt = one(spans, "POST");
    expect(attempt.kind).toBe(SpanKind.CLIENT);
    expect(attempt.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.response.status_code": 200,
      "server.address": "api.test",
      "server.port": site.port,
      "url.full": `http://api.test:${site.port}/v1/items?api_key=REDACTED&page=REDACTED`,
      "rewind.call.seq": 1,
    });
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain("s3cret");
  }, 60_000);

  it("give a call parked for approval a span, under a root exported while the run is still open", async () => {
    const script = `import { svc } from "rewind:tools";\nexport default async () => svc.create_ticket({ message: "printer on fire" });`;
    const id = await startRun(stack, { toolset, script });
    const waiting = await spansOf(id, (s) => named(s, "park approval").length > 0 && named(s, "rewind.run").length > 0);
    expect((await stack.request("GET", `/v1/runs/${id}`)).body.status).toBe("parked");
    const root = one(waiting, "rewind.run");
    const park = one(waiting, "park approval");
    const trace = { traceId: root.spanContext().traceId, rootSpanId: root.spanContext().spanId };
    expect(park.spanContext().traceId).toBe(trace.traceId);
    expect(park.parentSpanContext?.spanId).toBe(callSpanId(trace, 1));
    expect(park.attributes).toMatchObject({
      "rewind.park.reason": "approval",
      "gen_ai.tool.name": "svc.create_ticket",
      "rewind.call.seq": 1,
    });
    expect(named(waiting, "execute_tool svc.create_ticket")).toHaveLength(0);

    const approved = await stack.request("POST", `/v1/runs/${id}/calls/1/approve`);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect((await waitForRun(stack, id)).status).toBe("completed");
    const spans = await spansOf(
      id,
      (s) => named(s, "rewind.run.end").length > 0 && named(s, "execute_tool svc.create_ticket").length > 0,
    );
    const call = one(spans, "execute_tool svc.create_ticket");
    expect(call.spanContext().spanId).toBe(callSpanId(trace, 1));
    expect(call.attributes["rewind.call.approval"]).toBe(true);
    // The call's span runs from its issue, so the wait for approval is inside it.
    const startMs = (span: ReadableSpan) => span.startTime[0] * 1000 + span.startTime[1] / 1e6;
    expect(startMs(call)).toBeLessThanOrEqual(startMs(park));
    expect(one(spans, "tools/call create_ticket").parentSpanContext?.spanId).toBe(call.spanContext().spanId);
  }, 60_000);

  it("keep run ids and seqs out of span names, and name the service on every span", () => {
    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(10);
    const names = new Set(spans.map((s) => s.name));
    for (const name of names) {
      expect(name).not.toMatch(/run_|#\d|\bseq\b/);
      expect(name).toMatch(/^(rewind\.run(\.end)?|execute_tool [\w.]+|tools\/call \w+|park \w+|[A-Z]+)$/);
    }
    const runIds = new Set(spans.map((s) => s.attributes["rewind.run.id"]));
    expect(runIds.size).toBeGreaterThanOrEqual(5);
    expect(names.size).toBeLessThan(20);
    const instances = new Set<unknown>();
    for (const span of spans) {
      const resource = span.resource.attributes;
      expect(resource["service.name"]).toBe("rewind-test");
      expect(resource["service.version"]).toBe(packageJson.version);
      expect(resource["service.instance.id"]).toEqual(expect.any(String));
      instances.add(resource["service.instance.id"]);
    }
    expect(instances.size).toBe(1);
  });
});
