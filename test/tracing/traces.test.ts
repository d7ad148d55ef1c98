/**
 * A run is one trace: the run's span, a span per call under it, a span per attempt under its
 * call; and the W3C traceparent reaches MCP servers (`_meta`), host tools (`ctx.traceparent`)
 * and the http tool's requests, so a tool's own spans join the run's trace. A caller's
 * traceparent on POST /v1/runs makes the run part of the caller's trace.
 */
import { randomUUID } from "node:crypto";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHostToolWorker, type HostToolWorker } from "../../src/sdk/index.ts";
import { parseTraceparent } from "../../src/shared/trace-context.ts";
import { startLoopbackServer, tableResolver, type LoopbackServer } from "../helpers/http-loopback.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset } from "../helpers/toolset.ts";

const exporter = new InMemorySpanExporter();
let stack: RewindStack;
let server: TestMcpServer;
let site: LoopbackServer;
let host: HostToolWorker;
let hostRunning: Promise<void>;
const hostTraceparents: string[] = [];
const siteTraceparents: string[] = [];
const taskQueue = `trace-host-${randomUUID()}`;

beforeAll(async () => {
  site = await startLoopbackServer((req, res) => { siteTraceparents.push(String(req.headers["traceparent"] ?? "")); res.writeHead(200).end("{}"); });
  stack = await startRewindStack({ spanExporter: exporter, httpTool: { allowLoopbackForTests: true, resolve: tableResolver({ "api.test": ["127.0.0.1"] }).resolve } });
  server = await startMcpServer({ tools: [echoTool()] });
  host = await createHostToolWorker({ address: stack.address, taskQueue, tools: { "harness.ping": async (_args, ctx) => { hostTraceparents.push(ctx.traceparent ?? ""); return { pong: true }; } } });
  hostRunning = host.run();
});
afterAll(async () => {
  await host?.shutdown();
  await hostRunning;
  await stack?.stop();
  await server?.close();
  await site?.close();
});

describe("traces", () => {
  it("make the run one trace, with call and attempt spans, and carry traceparent to every tool", async () => {
    const toolset = await registerToolset(stack, {
      mcpServers: { svc: { url: server.url } },
      hostTools: { harness: { taskQueue, tools: { ping: { inputSchema: { type: "object" } } } } },
      http: { allowedHosts: [`api.test:${site.port}`] },
    });
    const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const callerSpan = "00f067aa0ba902b7";
    const started = await stack.request("POST", "/v1/runs", {
      toolset,
      script: `import { svc, harness } from "rewind:tools";\nexport default async () => { await Promise.all([svc.echo({ message: "x" }), harness.ping({})]); await fetch("http://api.test:${site.port}/"); return 1; };`,
    }, { traceparent: `00-${callerTrace}-${callerSpan}-01` });
    const id = String(started.body.id);
    expect((await waitForRun(stack, id)).status).toBe("completed");
    let spans = exporter.getFinishedSpans();
    for (let i = 0; i < 50 && !spans.some((s) => s.name === `run ${id}`); i++) {
      await new Promise((r) => setTimeout(r, 100));
      spans = exporter.getFinishedSpans();
    }
    const mine = spans.filter((s) => s.spanContext().traceId === callerTrace);
    const run = mine.find((s) => s.name === `run ${id}`);
    expect(run?.parentSpanContext?.spanId).toBe(callerSpan);
    const calls = mine.filter((s) => s.name.startsWith("call "));
    expect(calls.map((s) => s.name).sort()).toEqual(["call harness.ping", "call http.fetch", "call svc.echo"]);
    for (const call of calls) expect(call.parentSpanContext?.spanId).toBe(run?.spanContext().spanId);
    const attempts = mine.filter((s) => s.name.startsWith("mcp ") || s.name.startsWith("http "));
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) expect(calls.map((c) => c.spanContext().spanId)).toContain(attempt.parentSpanContext?.spanId);
    expect(JSON.stringify(mine.map((s) => s.attributes))).not.toContain("\"x\"");

    const mcpCall = server.calls.find((c) => c.name === "echo");
    const fromServer = parseTraceparent(String(mcpCall?.meta["traceparent"]));
    expect(fromServer?.traceId).toBe(callerTrace);
    expect(attempts.map((a) => a.spanContext().spanId)).toContain(fromServer?.spanId);
    expect(parseTraceparent(hostTraceparents[0])?.traceId).toBe(callerTrace);
    expect(parseTraceparent(siteTraceparents[0])?.traceId).toBe(callerTrace);
  }, 60_000);
});
