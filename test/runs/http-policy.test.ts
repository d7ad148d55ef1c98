/**
 * The `http.fetch` policy end to end, against a loopback server: approval parks a request before
 * it is sent (one request once approved, none when rejected), a timeout is the request's
 * deadline, concurrency keeps fetches from overlapping, and the retry options each request is
 * scheduled with follow the policy — or, without one, the method, exactly as before the policy
 * existed. Registering the policy without http is a 400 naming the field.
 */
import { randomUUID } from "node:crypto";
import type http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEventReceiver, type EventReceiver } from "../helpers/event-receiver.ts";
import {
  guardConnects,
  startLoopbackServer,
  tableResolver,
  type ConnectGuard,
  type LoopbackServer,
} from "../helpers/http-loopback.ts";
import { startRewindStack, waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

const key = `http-policy-key-${randomUUID()}`;
const auth = { authorization: `Bearer ${key}` };

let stack: RewindStack;
let site: LoopbackServer;
let guard: ConnectGuard;
let receiver: EventReceiver;
let host: string;
/** Every request the site answered or holds, with the run's key. */
const hits: { method: string; path: string; key: string | undefined }[] = [];
/** Requests in flight per lane (`/lane/<name>`), and the most seen at once. */
const lanes = new Map<string, { active: number; most: number }>();
const timers = new Set<NodeJS.Timeout>();
const dropped = new Set<string>();
/** A port nothing listens on, for a host that refuses connections. */
let closedPort = 0;

const request = (method: string, route: string, body?: unknown) => stack.request(method, route, body, auth);

function answerLater(ms: number, res: http.ServerResponse, then: () => void = () => undefined): void {
  const timer = setTimeout(() => {
    timers.delete(timer);
    then();
    if (!res.writableEnded) res.writeHead(200, { "content-type": "application/json" }).end('{"late":true}');
  }, ms);
  timers.add(timer);
}

beforeAll(async () => {
  guard = guardConnects();
  site = await startLoopbackServer((req, res) => {
    const path = req.url ?? "";
    hits.push({ method: req.method ?? "", path, key: req.headers["idempotency-key"] as string | undefined });
    if (path === "/slow") return answerLater(8_000, res);
    // The connection drops after the request arrived, the first time each key is seen.
    if (path.startsWith("/drop-once")) {
      const key = String(req.headers["idempotency-key"]);
      if (!dropped.has(key)) {
        dropped.add(key);
        return void req.socket.destroy();
      }
    }
    const lane = /^\/lane\/(\w+)/.exec(path)?.[1];
    if (lane) {
      const counts = lanes.get(lane) ?? { active: 0, most: 0 };
      lanes.set(lane, counts);
      counts.active += 1;
      counts.most = Math.max(counts.most, counts.active);
      return answerLater(300, res, () => {
        counts.active -= 1;
      });
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ method: req.method, path }));
  });
  host = `api.test:${site.port}`;
  const closed = await startLoopbackServer((_req, res) => void res.end());
  closedPort = closed.port;
  await closed.close();
  stack = await startRewindStack({
    env: { REWIND_API_KEYS: `${key}:http-policy-${randomUUID().slice(0, 8)}` },
    httpTool: {
      allowLoopbackForTests: true,
      resolve: tableResolver({ "api.test": ["127.0.0.1"], "down.test": ["127.0.0.1"] }).resolve,
    },
  });
  receiver = await startEventReceiver();
  receiver.setSecret(String((await request("PUT", "/v1/events/endpoint", { url: receiver.url })).body["secret"]));
});
afterAll(async () => {
  for (const timer of timers) clearTimeout(timer);
  await stack?.stop();
  await site?.close();
  await receiver?.close();
  guard?.restore();
});

async function toolsetWith(policy: Record<string, unknown> | undefined): Promise<string> {
  const { status, body } = await request("POST", "/v1/toolsets", {
    http: { allowedHosts: [host] },
    ...(policy ? { policies: { "http.fetch": policy } } : {}),
  });
  // 200 when the same document was registered before (the id is its digest).
  expect([200, 201], JSON.stringify(body)).toContain(status);
  return String(body.id);
}

async function start(toolset: string, script: string): Promise<string> {
  const { status, body } = await request("POST", "/v1/runs", { toolset, script });
  expect(status, JSON.stringify(body)).toBe(201);
  return String(body.id);
}

const finish = (id: string, timeoutMs?: number): Promise<ApiBody> => waitForRun(stack, id, timeoutMs, auth);

function waitParked(id: string): Promise<ApiBody> {
  return waitFor(`run ${id} to park a call`, async () => (await request("GET", `/v1/runs/${id}`)).body, {
    timeoutMs: 20_000,
    until: (body) => body.status === "parked" && Array.isArray(body["parked"]) && body["parked"].length > 0,
  });
}

/** The options each `callHttp` was scheduled with, by seq, as the run's history recorded them. */
async function scheduled(id: string): Promise<Map<number, { startToCloseSeconds: number; maximumAttempts: number }>> {
  const history = await stack.client.workflow.getHandle(id).fetchHistory();
  const options = new Map<number, { startToCloseSeconds: number; maximumAttempts: number }>();
  for (const event of history.events ?? []) {
    const attributes = event.activityTaskScheduledEventAttributes;
    if (attributes?.activityType?.name !== "callHttp") continue;
    options.set(Number(attributes.activityId), {
      startToCloseSeconds: Number(attributes.startToCloseTimeout?.seconds ?? 0),
      maximumAttempts: attributes.retryPolicy?.maximumAttempts ?? 0,
    });
  }
  return options;
}

const CATCHING = (call: string) => `import { ToolError } from "rewind:tools";
export default async function main() {
  try {
    const response = await ${call};
    return ["ok", response.status, await response.json()];
  } catch (e) {
    return e instanceof ToolError ? [e.code, e.message, e.details ?? null] : ["other", String(e)];
  }
}`;

describe('policies["http.fetch"]', () => {
  it("is refused with a 400 naming the field when the toolset has no http", async () => {
    const { status, body } = await request("POST", "/v1/toolsets", { policies: { "http.fetch": { approval: true } } });
    expect(status).toBe(400);
    expect(body.error?.message).toMatch(/policies\["http\.fetch"\].*http\.allowedHosts/);
    expect(body.error?.details).toMatchObject({ field: "policies" });
  });

  it("approval parks the request before it is sent; approved, it is sent once with the call's key", async () => {
    const toolset = await toolsetWith({ approval: true });
    const id = await start(toolset, CATCHING(`fetch("http://${host}/approved", { method: "POST", body: "pay" })`));
    const parked = await waitParked(id);
    expect(parked["parked"]).toMatchObject([{ seq: 1, tool: "http.fetch", reason: "approval" }]);
    const event = await receiver.waitFor(id, "call.approval_requested", 15_000);
    expect(event.data).toMatchObject({ seq: 1, tool: "http.fetch", args: { method: "POST", body: "pay" } });
    expect(hits.filter((h) => h.path === "/approved")).toEqual([]);
    expect((await request("POST", `/v1/runs/${id}/calls/1/approve`)).status).toBe(200);
    const done = await finish(id);
    expect(done.result).toMatchObject(["ok", 200, { method: "POST" }]);
    expect(hits.filter((h) => h.path === "/approved")).toEqual([{ method: "POST", path: "/approved", key: `${id}/1` }]);
  }, 60_000);

  it("approval rejected gives the script ToolError(rejected) and sends nothing", async () => {
    const toolset = await toolsetWith({ approval: true });
    const id = await start(toolset, CATCHING(`fetch("http://${host}/rejected")`));
    await waitParked(id);
    expect((await request("POST", `/v1/runs/${id}/calls/1/reject`, { reason: "not that host" })).status).toBe(200);
    const done = await finish(id);
    expect(done.result).toEqual(["rejected", "http.fetch: not that host", null]);
    expect(hits.filter((h) => h.path === "/rejected")).toEqual([]);
  }, 60_000);

  it("timeout is each attempt's deadline: a slow GET is tried 5 times and ends timedOut, a slow POST is sent once and ends outcomeUnknown", async () => {
    const toolset = await toolsetWith({ timeout: "1s" });
    const slowHits = () => hits.filter((h) => h.path === "/slow").length;
    const before = slowHits();
    const startedAt = Date.now();
    const id = await start(toolset, CATCHING(`fetch("http://${host}/slow")`));
    const done = await finish(id);
    // The server answers after 8 s; 5 attempts of 1 s and their backoff take far less than one answer each.
    expect(Date.now() - startedAt).toBeLessThan(25_000);
    expect(done.result).toEqual(["timedOut", expect.stringMatching(/timeout/), null]);
    expect(slowHits() - before).toBe(5);
    expect((await scheduled(id)).get(1)).toEqual({ startToCloseSeconds: 16, maximumAttempts: 5 });

    const posted = await finish(
      await start(toolset, CATCHING(`fetch("http://${host}/slow", { method: "POST", body: "x" })`)),
    );
    expect(posted.result).toEqual(["outcomeUnknown", expect.stringMatching(/may or may not have taken effect/), null]);
    expect(slowHits() - before).toBe(6);
  }, 90_000);

  it("concurrency 1 keeps a run's fetches from overlapping; without it they overlap", async () => {
    const script = (lane: string) => `export default async function main() {
  const responses = await Promise.all(Array.from({ length: 5 }, (_, i) => fetch("http://${host}/lane/${lane}?i=" + i)));
  return responses.map((r) => r.status);
}`;
    const [limited, free] = await Promise.all([toolsetWith({ concurrency: 1 }), toolsetWith(undefined)]);
    const ids = await Promise.all([start(limited, script("limited")), start(free, script("free"))]);
    const done = await Promise.all(ids.map((id) => finish(id)));
    expect(done.map((d) => d.result)).toEqual([
      [200, 200, 200, 200, 200],
      [200, 200, 200, 200, 200],
    ]);
    expect(lanes.get("limited")).toEqual({ active: 0, most: 1 });
    expect(lanes.get("free")?.most).toBeGreaterThan(1);
  }, 60_000);

  it("without a policy, GET is retried and POST sent at most once, with today's 45-second attempt", async () => {
    const id = await start(
      await toolsetWith(undefined),
      `export default async function main() {
  await fetch("http://${host}/plain");
  await fetch("http://${host}/plain", { method: "POST", body: "x" });
  await fetch("http://${host}/plain", { method: "HEAD" });
  return 1;
}`,
    );
    expect((await finish(id)).status).toBe("completed");
    expect([...(await scheduled(id)).entries()]).toEqual([
      [1, { startToCloseSeconds: 45, maximumAttempts: 5 }],
      [2, { startToCloseSeconds: 45, maximumAttempts: 1 }],
      [3, { startToCloseSeconds: 45, maximumAttempts: 5 }],
    ]);
  }, 60_000);

  it("an explicit onInterruption applies to every method", async () => {
    const script = `export default async function main() {
  await fetch("http://${host}/plain");
  await fetch("http://${host}/plain", { method: "POST", body: "x" });
  return 1;
}`;
    const [retry, once] = await Promise.all([
      toolsetWith({ onInterruption: "retry" }),
      toolsetWith({ onInterruption: "at_most_once" }),
    ]);
    const ids = await Promise.all([start(retry, script), start(once, script)]);
    await Promise.all(ids.map((id) => finish(id)));
    const [retried, atMostOnce] = await Promise.all(ids.map((id) => scheduled(id)));
    expect([...(retried?.values() ?? [])].map((o) => o.maximumAttempts)).toEqual([5, 5]);
    expect([...(atMostOnce?.values() ?? [])].map((o) => o.maximumAttempts)).toEqual([1, 1]);
  }, 60_000);
});

describe("network failures of fetch are interruptions, for the policy to decide", () => {
  const toolsetFor = async (policy: Record<string, unknown> | undefined) => {
    const { status, body } = await request("POST", "/v1/toolsets", {
      http: { allowedHosts: [host, `down.test:${closedPort}`] },
      ...(policy ? { policies: { "http.fetch": policy } } : {}),
    });
    expect([200, 201], JSON.stringify(body)).toContain(status);
    return String(body.id);
  };

  it("a connection dropped after a POST was sent is outcomeUnknown by default, and sent again with the same key under retry", async () => {
    const seen = (id: string) => hits.filter((h) => h.path === "/drop-once" && h.key?.startsWith(`${id}/`));
    const unknown = await start(
      await toolsetFor(undefined),
      CATCHING(`fetch("http://${host}/drop-once", { method: "POST", body: "x" })`),
    );
    const first = await finish(unknown);
    expect(first.result).toEqual([
      "outcomeUnknown",
      expect.stringMatching(/connection broke after the call was sent/),
      null,
    ]);
    expect(seen(unknown)).toHaveLength(1);

    const retried = await start(
      await toolsetFor({ onInterruption: "retry" }),
      CATCHING(`fetch("http://${host}/drop-once", { method: "POST", body: "x" })`),
    );
    const second = await finish(retried);
    expect(second.result).toEqual(["ok", 200, { method: "POST", path: "/drop-once" }]);
    expect(seen(retried).map((h) => h.key)).toEqual([`${retried}/1`, `${retried}/1`]);
  }, 60_000);

  it("a host that refuses connections is retried for a GET, then toolFailed saying nothing was sent", async () => {
    const id = await start(await toolsetFor(undefined), CATCHING(`fetch("http://down.test:${closedPort}/")`));
    const done = await finish(id, 60_000);
    expect(done.result).toEqual([
      "toolFailed",
      expect.stringMatching(/could not be reached; the call was not sent/),
      { reason: "unreachable" },
    ]);
    const journal = await request("GET", `/v1/runs/${id}/journal`);
    expect((journal.body["entries"] as { attempts: number }[])[0]?.attempts).toBe(5);
  }, 90_000);
});
