/**
 * Two tenants (two API keys, two namespaces) aim Rewind's own processes at loopback through
 * every server-side target a tenant chooses: an MCP server's URL at registration and the events
 * endpoint, in every notation of loopback, plus the unspecified address, metadata and private
 * answers, and a trusted host that redirects to loopback. Nothing of it may reach the counter
 * server, and every refusal reads the same whether something listens on the port or not.
 * Loopback is not trusted here: the stack trusts only the made-up names its resolver maps.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tableResolver } from "../helpers/http-loopback.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

interface Counter {
  port: number;
  requests: number;
  connections: number;
  close(): Promise<void>;
}

/** A server that answers every request and counts: what no refused target may ever reach. */
async function startCounter(
  host: string,
  port = 0,
  respond: http.RequestListener = (_req, res) => res.end("admin: state changed"),
): Promise<Counter> {
  let requests = 0;
  let connections = 0;
  const server = http.createServer((req, res) => {
    requests++;
    respond(req, res);
  });
  server.on("connection", () => {
    connections++;
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, host, () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    get requests() {
      return requests;
    },
    get connections() {
      return connections;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const TENANTS = [
  { key: `tenant-a-${randomUUID()}`, namespace: `targets-a-${randomUUID().slice(0, 8)}` },
  { key: `tenant-b-${randomUUID()}`, namespace: `targets-b-${randomUUID().slice(0, 8)}` },
];
const auth = (tenant: (typeof TENANTS)[number]) => ({ authorization: `Bearer ${tenant.key}` });

let stack: RewindStack;
let counter: Counter;
let counterV6: Counter | undefined;
let closedPort: number;
let redirector: Counter;
let tools: TestMcpServer;

beforeAll(async () => {
  counter = await startCounter("127.0.0.1");
  // The same port on ::1 when the machine has IPv6 loopback, so [::1] notations have a listener too.
  counterV6 = await startCounter("::1", counter.port).catch(() => undefined);
  const spare = await startCounter("127.0.0.1");
  closedPort = spare.port;
  await spare.close();
  // A trusted host that sends every request on to the counter: 307 keeps the method and body.
  redirector = await startCounter("127.0.0.1", 0, (req, res) => {
    req.resume();
    res.writeHead(307, { location: `http://127.0.0.1:${counter.port}${req.url ?? "/"}` }).end();
  });
  tools = await startMcpServer({ tools: [echoTool()] });
  const resolver = tableResolver({
    "tools.trusted.test": ["127.0.0.1"],
    "redirect.trusted.test": ["127.0.0.1"],
    localhost: ["127.0.0.1", "::1"],
    "loopback.test": ["127.0.0.1"],
    "metadata.test": ["169.254.169.254"],
    "private.test": ["10.0.0.1"],
    "mixed.test": ["93.184.215.14", "127.0.0.1"],
  });
  stack = await startRewindStack({
    env: {
      REWIND_API_KEYS: TENANTS.map((t) => `${t.key}:${t.namespace}`).join(","),
      REWIND_TRUSTED_TARGETS: "tools.trusted.test,redirect.trusted.test",
    },
    outbound: { resolve: resolver.resolve },
  });
});
afterAll(async () => {
  await stack?.stop();
  await Promise.all([counter?.close(), counterV6?.close(), redirector?.close(), tools?.close()]);
});

/** Every way a tenant might spell "this machine" (and its neighbours), at `port`. */
function notations(port: number): string[] {
  return [
    `http://127.0.0.1:${port}/admin?reset=1`,
    `http://127.1:${port}/admin`,
    `http://2130706433:${port}/admin`,
    `http://0x7f000001:${port}/admin`,
    `http://0177.0.0.1:${port}/admin`,
    `http://127.0.0.2:${port}/admin`,
    `http://localhost:${port}/admin`,
    `http://LocalHost.:${port}/admin`,
    `http://[::1]:${port}/admin`,
    `http://[::ffff:127.0.0.1]:${port}/admin`,
    `http://[::ffff:7f00:1]:${port}/admin`,
    `http://[0:0:0:0:0:0:0:1]:${port}/admin`,
    `http://0.0.0.0:${port}/admin`,
    `http://0:${port}/admin`,
    `http://[::]:${port}/admin`,
    `https://127.0.0.1:${port}/admin`,
    `http://loopback.test:${port}/admin`,
    `http://metadata.test:${port}/latest/meta-data/`,
    `http://private.test:${port}/`,
    `http://mixed.test:${port}/`,
    `http://unresolvable.test:${port}/`,
  ];
}

/** The answer with the port the tenant chose taken out: all that may differ between two ports. */
const withoutPort = (body: ApiBody, port: number) =>
  JSON.parse(JSON.stringify(body).replaceAll(String(port), "PORT")) as unknown;

async function register(tenant: (typeof TENANTS)[number], url: string) {
  return stack.request("POST", "/v1/toolsets", { mcpServers: { admin: { url } } }, auth(tenant));
}
async function setEndpoint(tenant: (typeof TENANTS)[number], url: string) {
  return stack.request("PUT", "/v1/events/endpoint", { url }, auth(tenant));
}

describe("targets a tenant chooses, with API keys set", () => {
  it("refuses an MCP server URL on loopback, in every notation, the same whether the port is open or closed", async () => {
    const open = notations(counter.port);
    const closed = notations(closedPort);
    for (const tenant of TENANTS) {
      for (const [i, url] of open.entries()) {
        const onOpen = await register(tenant, url);
        const onClosed = await register(tenant, closed[i] ?? "");
        expect(onOpen.status, `${url}: ${JSON.stringify(onOpen.body)}`).toBe(422);
        expect(onOpen.body.error).toMatchObject({ code: "toolsetRejected", details: { reason: "targetNotAllowed" } });
        expect(onOpen.body.error?.message).toMatch(/is not an allowed target/);
        expect(withoutPort(onOpen.body, counter.port)).toEqual(withoutPort(onClosed.body, closedPort));
      }
    }
    expect(counter.requests + counter.connections).toBe(0);
    expect((counterV6?.requests ?? 0) + (counterV6?.connections ?? 0)).toBe(0);
  });

  it("refuses an events endpoint on loopback, in every notation, the same whether the port is open or closed", async () => {
    const open = notations(counter.port);
    const closed = notations(closedPort);
    for (const tenant of TENANTS) {
      for (const [i, url] of open.entries()) {
        const onOpen = await setEndpoint(tenant, url);
        const onClosed = await setEndpoint(tenant, closed[i] ?? "");
        expect(onOpen.status, `${url}: ${JSON.stringify(onOpen.body)}`).toBe(422);
        expect(onOpen.body.error).toMatchObject({
          code: "targetNotAllowed",
          details: { field: "url", reason: "targetNotAllowed" },
        });
        expect(withoutPort(onOpen.body, counter.port)).toEqual(withoutPort(onClosed.body, closedPort));
      }
      // Nothing was stored: the namespace still has no endpoint.
      expect((await stack.request("GET", "/v1/events/endpoint", undefined, auth(tenant))).status).toBe(404);
    }
    expect(counter.requests + counter.connections).toBe(0);
    expect((counterV6?.requests ?? 0) + (counterV6?.connections ?? 0)).toBe(0);
  });

  it("checks a trusted host's redirect to loopback like any target: refused, the same for an open and a closed port", async () => {
    const before = redirector.requests;
    const refusals = [];
    for (const tenant of TENANTS) {
      const answer = await register(tenant, `http://redirect.trusted.test:${redirector.port}/mcp`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(422);
      expect(answer.body.error).toMatchObject({ code: "toolsetRejected", details: { reason: "targetNotAllowed" } });
      refusals.push(withoutPort(answer.body, counter.port));
    }
    expect(refusals[0]).toEqual(refusals[1]);
    expect(redirector.requests).toBeGreaterThan(before); // the redirect was asked for, and not followed
    expect(counter.requests + counter.connections).toBe(0);
  });

  it("lets a trusted host through: a tenant registers it and its runs call it", async () => {
    const [tenant] = TENANTS;
    if (!tenant) throw new Error("no tenant");
    const registered = await register(tenant, `http://tools.trusted.test:${tools.port}/mcp`);
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const started = await stack.request(
      "POST",
      "/v1/runs",
      {
        toolset: registered.body.id,
        script: `import { admin } from "rewind:tools"; export default async () => (await admin.echo({ message: "hi" }) as { args: unknown }).args;`,
      },
      auth(tenant),
    );
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(await waitForRun(stack, String(started.body.id), 30_000, auth(tenant))).toMatchObject({
      status: "completed",
      result: { message: "hi" },
    });
  });

  it("delivers events to a trusted endpoint without following its redirect to loopback", async () => {
    const [, tenant] = TENANTS;
    if (!tenant) throw new Error("no tenant");
    expect((await setEndpoint(tenant, `http://redirect.trusted.test:${redirector.port}/events`)).status).toBe(200);
    const before = redirector.requests;
    const started = await stack.request("POST", "/v1/runs", { script: "export default async () => 1;" }, auth(tenant));
    expect(await waitForRun(stack, String(started.body.id), 30_000, auth(tenant))).toMatchObject({
      status: "completed",
    });
    await waitFor("the event's delivery to the trusted endpoint", () => redirector.requests > before, {
      timeoutMs: 10_000,
    });
    expect(counter.requests + counter.connections).toBe(0);
  });
});
