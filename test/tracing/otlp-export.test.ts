/**
 * Spans reach a collector in the configured OTLP protocol: protobuf or JSON over HTTP (with the
 * configured headers), or gRPC (headers as metadata), each with the process's resource:
 * `service.name`, `service.version` and `service.instance.id`.
 */
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import packageJson from "../../package.json" with { type: "json" };
import { createTracing } from "../../src/tracing/tracing.ts";

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function httpCollector(): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200, { "content-type": String(req.headers["content-type"]) }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** A gRPC server by hand (HTTP/2 without TLS): answers every call with an empty message and status 0. */
async function grpcCollector(): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = http2.createServer();
  server.on("stream", (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      received.push({ path: String(headers[":path"]), headers, body: Buffer.concat(chunks) });
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end(Buffer.from([0, 0, 0, 0, 0]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** One attempt span, exported and flushed. */
async function exportOne(tracing: ReturnType<typeof createTracing>): Promise<void> {
  const attempt = tracing.startAttempt(
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "tools/call create_ticket",
    { "mcp.method.name": "tools/call" },
  );
  attempt?.end({ errorType: "tool_error" });
  await tracing.shutdown();
}

describe("OTLP export", () => {
  it("sends protobuf over HTTP by default, with the configured headers", async () => {
    const collector = await httpCollector();
    await exportOne(
      createTracing({
        serviceName: "rewind-proto",
        otlp: { url: `${collector.url}/v1/traces`, headers: { "x-api-key": "k1" } },
      }),
    );
    expect(collector.received).toHaveLength(1);
    const [request] = collector.received;
    expect(request?.path).toBe("/v1/traces");
    expect(request?.headers["content-type"]).toBe("application/x-protobuf");
    expect(request?.headers["x-api-key"]).toBe("k1");
    const bytes = request?.body.toString("latin1") ?? "";
    for (const text of [
      "tools/call create_ticket",
      "rewind-proto",
      "service.version",
      packageJson.version,
      "service.instance.id",
      "tool_error",
    ])
      expect(bytes).toContain(text);
  });

  it("sends JSON over HTTP, with the resource's service name, version and instance", async () => {
    const collector = await httpCollector();
    await exportOne(
      createTracing({
        serviceName: "rewind-json",
        otlp: { url: `${collector.url}/v1/traces`, headers: {}, protocol: "http/json" },
      }),
    );
    const [request] = collector.received;
    expect(request?.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(request?.body.toString("utf8") ?? "{}") as {
      resourceSpans: {
        resource: { attributes: { key: string; value: { stringValue?: string } }[] };
        scopeSpans: { spans: { name: string }[] }[];
      }[];
    };
    const resource = Object.fromEntries(
      body.resourceSpans[0]?.resource.attributes.map((a) => [a.key, a.value.stringValue]) ?? [],
    );
    expect(resource["service.name"]).toBe("rewind-json");
    expect(resource["service.version"]).toBe(packageJson.version);
    expect(resource["service.instance.id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.resourceSpans[0]?.scopeSpans[0]?.spans.map((s) => s.name)).toEqual(["tools/call create_ticket"]);
  });

  it("sends over gRPC, with the headers as metadata", async () => {
    const collector = await grpcCollector();
    await exportOne(
      createTracing({
        serviceName: "rewind-grpc",
        otlp: { url: collector.url, headers: { "X-Api-Key": "k2" }, protocol: "grpc" },
      }),
    );
    expect(collector.received).toHaveLength(1);
    const [request] = collector.received;
    expect(request?.path).toBe("/opentelemetry.proto.collector.trace.v1.TraceService/Export");
    expect(request?.headers["content-type"]).toBe("application/grpc");
    expect(request?.headers["x-api-key"]).toBe("k2");
    expect(request?.body.toString("latin1")).toContain("tools/call create_ticket");
  });
});
