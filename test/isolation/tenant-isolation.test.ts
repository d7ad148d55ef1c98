/**
 * Tenant isolation with two namespaces in REWIND_API_KEYS: without a valid key every route but
 * /healthz, /openapi.json and webhook URLs answers 401; with namespace A's key, namespace B's
 * runs, toolsets, stored workflows, credentials and events endpoint look exactly like missing
 * ones (404, same message as for an id that never existed) and A's requests change nothing of
 * B's; a toolset registered in both namespaces (same content, same id) never lends B's
 * credentials to A's runs; webhook URLs open only with their own run's and name's token; and an
 * event signed for A does not verify with B's secret.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

const KEY_A = `key-a-${randomUUID()}`;
const KEY_B = `key-b-${randomUUID()}`;
const A = { authorization: `Bearer ${KEY_A}` };
const B = { authorization: `Bearer ${KEY_B}` };
const MISSING_RUN = "run_01ZZZZZZZZZZZZZZZZZZZZZZZZ";
const TOOLS = 'import { tools } from "rewind:tools";\n';
const WAIT_FOR_HOOK =
  'import { webhook, waitForSignal } from "rewind:tools";\nexport default async () => { await webhook("done"); return waitForSignal("done"); };';

interface Delivery {
  body: string;
  headers: Record<string, string>;
}
interface Receiver {
  url: string;
  deliveries: Delivery[];
  close(): Promise<void>;
}

/** An events endpoint that keeps each delivery's raw body and headers, to verify them with any secret. */
async function startReceiver(): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on("end", () => {
      deliveries.push({
        body,
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    deliveries,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let stack: RewindStack;
let mcp: TestMcpServer;
let receiverA: Receiver;
let receiverB: Receiver;
const secrets = { a: "", b: "" };
const ids = { shared: "", gatedB: "", workflowB: "", bDone: "", bParked: "", bWaiting: "", aWaiting: "", aDone: "" };
const hooks = { a: "", b: "" };

async function start(headers: Record<string, string>, body: Record<string, unknown>): Promise<string> {
  const answer = await stack.request("POST", "/v1/runs", body, headers);
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return String(answer.body.id);
}

async function hookUrl(runId: string, headers: Record<string, string>): Promise<string> {
  return waitFor(`the webhook URL of ${runId}`, async () => {
    const journal = await stack.request("GET", `/v1/runs/${runId}/journal`, undefined, headers);
    const url = (journal.body["entries"] as { result?: { url?: unknown } }[] | undefined)?.[0]?.result?.url;
    return typeof url === "string" ? url : undefined;
  });
}

beforeAll(async () => {
  const suffix = randomUUID().slice(0, 8);
  [stack, mcp, receiverA, receiverB] = await Promise.all([
    startRewindStack({ env: { REWIND_API_KEYS: `${KEY_A}:tenant-a-${suffix},${KEY_B}:tenant-b-${suffix}` } }),
    startMcpServer({ tools: [echoTool()] }),
    startReceiver(),
    startReceiver(),
  ]);
  secrets.a = String((await stack.request("PUT", "/v1/events/endpoint", { url: receiverA.url }, A)).body["secret"]);
  secrets.b = String((await stack.request("PUT", "/v1/events/endpoint", { url: receiverB.url }, B)).body["secret"]);
  const document = { mcpServers: { tools: { url: mcp.url } } };
  const inA = await stack.request("POST", "/v1/toolsets", document, A);
  const inB = await stack.request("POST", "/v1/toolsets", document, B);
  expect([inA.status, inB.status]).toEqual([201, 201]);
  expect(inA.body.id).toBe(inB.body.id);
  ids.shared = String(inB.body.id);
  ids.gatedB = String(
    (await stack.request("POST", "/v1/toolsets", { ...document, policies: { "tools.echo": { approval: true } } }, B))
      .body.id,
  );
  ids.workflowB = String(
    (
      await stack.request(
        "POST",
        "/v1/workflows",
        { name: `onlyInB_${suffix}`, script: "export default async (n: number) => n + 1;" },
        B,
      )
    ).body.id,
  );
  ids.bDone = await start(B, { script: 'export default async () => "b\'s result";' });
  ids.bParked = await start(B, {
    script: TOOLS + 'export default async () => tools.echo({ message: "b gated" });',
    toolset: ids.gatedB,
  });
  ids.bWaiting = await start(B, { script: WAIT_FOR_HOOK });
  ids.aWaiting = await start(A, { script: WAIT_FOR_HOOK });
  hooks.a = await hookUrl(ids.aWaiting, A);
  hooks.b = await hookUrl(ids.bWaiting, B);
  await waitForRun(stack, ids.bDone, 30_000, B);
  await waitFor("b's call to park", async () =>
    (await stack.request("GET", `/v1/runs/${ids.bParked}`, undefined, B)).body.status === "parked" ? true : undefined,
  );
});

afterAll(async () => {
  for (const [id, headers] of [
    [ids.bParked, B],
    [ids.bWaiting, B],
    [ids.aWaiting, A],
  ] as const) {
    if (id) await stack?.request("POST", `/v1/runs/${id}/cancel`, undefined, headers).catch(() => undefined);
  }
  await stack?.stop();
  await mcp?.close();
  await receiverA?.close();
  await receiverB?.close();
});

interface OpenApi {
  paths: Record<string, Record<string, { security?: unknown[]; requestBody?: unknown }>>;
}

describe("API keys", () => {
  it("answers 401 without a valid key on every route but /healthz, /openapi.json and webhook URLs", async () => {
    const doc = (await (await fetch(`${stack.api.url}/openapi.json`)).json()) as OpenApi;
    const wrongKeys: Record<string, string>[] = [
      {},
      { authorization: "" },
      { authorization: `Bearer ${KEY_A}x` },
      { authorization: `Bearer ${KEY_A.slice(0, -1)}` },
      { authorization: `Basic ${KEY_A}` },
      { authorization: KEY_A },
      { authorization: `Bearer ${KEY_A} ${KEY_B}` },
      { "x-api-key": KEY_A },
    ];
    let checked = 0;
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const path = template
          .replace("{id}", template.startsWith("/v1/runs") ? ids.bDone : ids.shared)
          .replace("{seq}", "1")
          .replace("{user}", "ada")
          .replace("{runId}", ids.bWaiting)
          .replace("{name}", "done");
        const body = op.requestBody ? {} : undefined;
        for (const headers of wrongKeys) {
          const answer = await stack.request(method.toUpperCase(), path, body, headers);
          if (op.security?.length === 0) {
            expect(answer.status, `${method} ${path} is public`).not.toBe(401);
          } else {
            expect(
              [answer.status, answer.body.error?.code],
              `${method} ${path} with ${JSON.stringify(headers)}`,
            ).toEqual([401, "unauthorized"]);
            checked += 1;
          }
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(19 * wrongKeys.length);
    expect((await stack.request("GET", "/healthz")).status).toBe(200);
    expect((await fetch(`${stack.api.url}/openapi.json`)).status).toBe(200);
    expect((await stack.request("POST", `/v1/hooks/${ids.bWaiting}/done?token=forged`, {})).status).toBe(404);
  });
});

describe("namespace A against namespace B's runs", () => {
  /** Same status, code and message (but for the id) as for a run that never existed. */
  async function looksMissing(method: string, route: (id: string) => string, body?: unknown): Promise<void> {
    for (const id of [ids.bDone, ids.bParked, ids.bWaiting]) {
      const theirs = await stack.request(method, route(id), body, A);
      const missing = await stack.request(method, route(MISSING_RUN), body, A);
      const scrub = (answer: { status: number; body: ApiBody }, runId: string) => ({
        status: answer.status,
        code: answer.body.error?.code,
        message: answer.body.error?.message.replaceAll(runId, "<id>"),
      });
      expect(scrub(theirs, id), `${method} ${route(id)}`).toEqual(scrub(missing, MISSING_RUN));
      expect(theirs.status).toBe(404);
    }
  }

  it("can't read, journal, export, cancel, decide or fork them: each looks like a missing run", async () => {
    await looksMissing("GET", (id) => `/v1/runs/${id}`);
    await looksMissing("GET", (id) => `/v1/runs/${id}/journal`);
    await looksMissing("GET", (id) => `/v1/runs/${id}/cassette`);
    await looksMissing("POST", (id) => `/v1/runs/${id}/cancel`);
    await looksMissing("POST", (id) => `/v1/runs/${id}/signals/done`, { from: "A" });
    await looksMissing("POST", (id) => `/v1/runs/${id}/calls/1/approve`);
    await looksMissing("POST", (id) => `/v1/runs/${id}/calls/1/reject`, { reason: "from A" });
    await looksMissing("POST", (id) => `/v1/runs/${id}/calls/1/resume`);
    await looksMissing("POST", (id) => `/v1/runs/${id}/fork`, {
      script: "export default async () => 1;",
      parent: "cancel",
    });
    // Nothing A asked for happened to B's runs.
    const parked = await stack.request("GET", `/v1/runs/${ids.bParked}`, undefined, B);
    expect(parked.body).toMatchObject({ status: "parked", parked: [{ seq: 1, tool: "tools.echo" }] });
    expect((await stack.request("GET", `/v1/runs/${ids.bWaiting}`, undefined, B)).body.status).toBe("running");
    expect(mcp.calls.filter((c) => c.arguments["message"] === "b gated")).toHaveLength(0);
  });

  it("never lists them, not even with a page token B was given", async () => {
    const bRuns = [ids.bDone, ids.bParked, ids.bWaiting];
    const listedForB = await waitFor("B's runs to be listed", async () => {
      const page = await stack.request("GET", "/v1/runs?pageSize=1000", undefined, B);
      const listed = (page.body.runs ?? []).map((r) => r.id);
      return bRuns.every((id) => listed.includes(id)) ? listed : undefined;
    });
    expect(listedForB).not.toContain(ids.aWaiting);
    const forA = await stack.request("GET", "/v1/runs?pageSize=1000", undefined, A);
    expect((forA.body.runs ?? []).map((r) => r.id).filter((id) => bRuns.includes(id))).toEqual([]);
    const firstOfB = await stack.request("GET", "/v1/runs?pageSize=1", undefined, B);
    const withBsToken = await stack.request(
      "GET",
      `/v1/runs?pageSize=1000&pageToken=${String(firstOfB.body.nextPageToken)}`,
      undefined,
      A,
    );
    expect(withBsToken.status).toBe(200);
    expect((withBsToken.body.runs ?? []).map((r) => r.id).filter((id) => bRuns.includes(id))).toEqual([]);
  });

  it("gets its own run for an Idempotency-Key B already used", async () => {
    const key = { "idempotency-key": `shared-${randomUUID()}` };
    const inB = await stack.request(
      "POST",
      "/v1/runs",
      { script: 'export default async () => "b";' },
      { ...B, ...key },
    );
    const inA = await stack.request(
      "POST",
      "/v1/runs",
      { script: 'export default async () => "a";' },
      { ...A, ...key },
    );
    expect([inB.status, inA.status]).toEqual([201, 201]);
    expect(inA.body.id).not.toBe(inB.body.id);
    expect((await waitForRun(stack, String(inA.body.id), 30_000, A)).result).toBe("a");
    expect((await waitForRun(stack, String(inB.body.id), 30_000, B)).result).toBe("b");
  });
});

describe("namespace A against namespace B's toolsets, workflows, credentials and events", () => {
  it("can't read B's toolsets or stored workflows, nor write credentials to B's toolsets", async () => {
    const missingToolset = `ts_${"0".repeat(64)}`;
    for (const [route, missing] of [
      [`/v1/toolsets/${ids.gatedB}`, `/v1/toolsets/${missingToolset}`],
      [`/v1/toolsets/${ids.gatedB}/declarations`, `/v1/toolsets/${missingToolset}/declarations`],
      [`/v1/toolsets/${ids.gatedB}/tools?query=echo`, `/v1/toolsets/${missingToolset}/tools?query=echo`],
      [`/v1/workflows/${ids.workflowB}`, "/v1/workflows/wf_missing"],
    ] as const) {
      const theirs = await stack.request("GET", route, undefined, A);
      expect(theirs.status, route).toBe(404);
      expect(theirs.body.error?.code).toBe((await stack.request("GET", missing, undefined, A)).body.error?.code);
    }
    expect((await stack.request("GET", `/v1/toolsets/${ids.gatedB}`, undefined, B)).status).toBe(200);
    const credentials = { mcpServers: { tools: { headers: { authorization: "Bearer from-a" } } } };
    expect((await stack.request("PUT", `/v1/toolsets/${ids.gatedB}/credentials`, credentials, A)).status).toBe(404);
    expect(
      (await stack.request("PUT", `/v1/end-users/ada/toolsets/${ids.gatedB}/credentials`, credentials, A)).status,
    ).toBe(404);
  });

  it("runs the shared toolset without B's credentials, while B's runs of it use them", async () => {
    const written = await stack.request(
      "PUT",
      `/v1/toolsets/${ids.shared}/credentials`,
      { mcpServers: { tools: { headers: { authorization: "Bearer secret-of-b" } } } },
      B,
    );
    expect(written.status).toBe(200);
    const script = (who: string) =>
      TOOLS + `export default async () => { await tools.echo({ message: "${who}" }); return "${who}"; };`;
    const [inA, inB] = await Promise.all([
      start(A, { script: script("sent by A"), toolset: ids.shared }),
      start(B, { script: script("sent by B"), toolset: ids.shared }),
    ]);
    expect((await waitForRun(stack, inA, 30_000, A)).status).toBe("completed");
    expect((await waitForRun(stack, inB, 30_000, B)).status).toBe("completed");
    const headersOf = (message: string) =>
      mcp.calls.filter((c) => c.arguments["message"] === message).map((c) => c.headers["authorization"] ?? null);
    expect(headersOf("sent by A")).toEqual([null]);
    expect(headersOf("sent by B")).toEqual(["Bearer secret-of-b"]);
    // Neither the cassette nor the journal of B's run holds the credential.
    const cassette = await stack.request("GET", `/v1/runs/${inB}/cassette`, undefined, B);
    expect(JSON.stringify(cassette.body)).not.toContain("secret-of-b");
  });

  it("resolves end users named like Object.prototype members to their own credentials, else the toolset's", async () => {
    const users = ["constructor", "__proto__", "toString", "hasOwnProperty"];
    for (const user of ["toString", "__proto__"]) {
      const own = await stack.request(
        "PUT",
        `/v1/end-users/${user}/toolsets/${ids.shared}/credentials`,
        { mcpServers: { tools: { headers: { authorization: `Bearer own-of-${user}` } } } },
        B,
      );
      expect(own.status).toBe(200);
    }
    // Started at once: a run sees every write made before it, whatever a worker cached.
    const runs = await Promise.all(
      users.map((user) =>
        start(B, {
          script: TOOLS + `export default async () => tools.echo({ message: "end user ${user}" });`,
          toolset: ids.shared,
          endUser: user,
        }),
      ),
    );
    const done = await Promise.all(runs.map((id) => waitForRun(stack, id, 30_000, B)));
    expect(
      done.map((d) => d.status),
      JSON.stringify(done.map((d) => d.error)),
    ).toEqual(users.map(() => "completed"));
    const sent = users.map(
      (user) => mcp.calls.find((c) => c.arguments["message"] === `end user ${user}`)?.headers["authorization"] ?? null,
    );
    expect(sent).toEqual([
      "Bearer secret-of-b",
      "Bearer own-of-__proto__",
      "Bearer own-of-toString",
      "Bearer secret-of-b",
    ]);
  });

  it("uses an end user's credentials written just before a run, though a worker read the toolset's a moment earlier", async () => {
    const user = `late-${Date.now()}`;
    const send = (message: string) =>
      start(B, {
        script: TOOLS + `export default async () => tools.echo({ message: "${message}" });`,
        toolset: ids.shared,
        endUser: user,
      });
    const before = await send("before the write");
    expect((await waitForRun(stack, before, 30_000, B)).status).toBe("completed");
    // The worker has just read this toolset's credentials (no end user yet); now the write.
    const own = await stack.request(
      "PUT",
      `/v1/end-users/${user}/toolsets/${ids.shared}/credentials`,
      { mcpServers: { tools: { headers: { authorization: "Bearer own-of-late" } } } },
      B,
    );
    expect(own.status).toBe(200);
    const after = await send("after the write");
    expect((await waitForRun(stack, after, 30_000, B)).status).toBe("completed");
    const sent = (message: string) =>
      mcp.calls.find((c) => c.arguments["message"] === message)?.headers["authorization"] ?? null;
    expect(sent("before the write")).toBe("Bearer secret-of-b");
    expect(sent("after the write")).toBe("Bearer own-of-late");
  });

  it("sees only its own events endpoint", async () => {
    expect((await stack.request("GET", "/v1/events/endpoint", undefined, A)).body).toEqual({ url: receiverA.url });
    expect((await stack.request("GET", "/v1/events/endpoint", undefined, B)).body).toEqual({ url: receiverB.url });
  });

  it("gets events signed with its own secret: one for A does not verify with B's, and B's endpoint never sees it", async () => {
    ids.aDone = await start(A, { script: 'export default async () => "a\'s result";' });
    await waitForRun(stack, ids.aDone, 30_000, A);
    const delivery = await waitFor("A's run.completed", async () =>
      receiverA.deliveries.find((d) => d.body.includes(ids.aDone) && d.body.includes("run.completed")),
    );
    expect(new Webhook(secrets.a).verify(delivery.body, delivery.headers)).toMatchObject({
      type: "run.completed",
      runId: ids.aDone,
    });
    expect(() => new Webhook(secrets.b).verify(delivery.body, delivery.headers)).toThrow();
    const bEvent = await waitFor("B's run.completed", async () =>
      receiverB.deliveries.find((d) => d.body.includes(ids.bDone)),
    );
    expect(() => new Webhook(secrets.a).verify(bEvent.body, bEvent.headers)).toThrow();
    expect(receiverB.deliveries.filter((d) => d.body.includes(ids.aDone) || d.body.includes(ids.aWaiting))).toEqual([]);
    expect(receiverA.deliveries.filter((d) => d.body.includes(ids.bDone) || d.body.includes(ids.bParked))).toEqual([]);
  });
});

describe("webhook URLs", () => {
  it("open only with the token of their own run and name", async () => {
    const b = new URL(hooks.b);
    const tokenA = new URL(hooks.a).searchParams.get("token") ?? "";
    const tokenB = b.searchParams.get("token") ?? "";
    const flipped = `${tokenB.slice(0, -1)}${tokenB.endsWith("A") ? "B" : "A"}`;
    const refused: [string, string, string | undefined][] = [
      [ids.bWaiting, "done", tokenA],
      [ids.aWaiting, "done", tokenB],
      [ids.bWaiting, "other", tokenB],
      [ids.bDone, "done", tokenB],
      [ids.bWaiting, "done", undefined],
      [ids.bWaiting, "done", ""],
      [ids.bWaiting, "done", flipped],
      [ids.bWaiting, "done", tokenB.toUpperCase()],
      [ids.bWaiting, "done", `${tokenB}=`],
      [ids.bWaiting, "done", `${tokenB}${tokenB}`],
      [MISSING_RUN, "done", tokenB],
    ];
    for (const [runId, name, token] of refused) {
      const query = token === undefined ? "" : `?token=${encodeURIComponent(token)}`;
      const answer = await stack.request("POST", `/v1/hooks/${runId}/${name}${query}`, { from: "outside" });
      expect([answer.status, answer.body.error?.code], `${runId}/${name} with ${String(token)}`).toEqual([
        404,
        "notFound",
      ]);
    }
    expect((await stack.request("GET", `/v1/runs/${ids.bWaiting}`, undefined, B)).body.status).toBe("running");
    // Its own token opens it, without an API key, and the run gets the payload.
    const own = await stack.request("POST", `${b.pathname}${b.search}`, { from: "b's partner" });
    expect(own.status).toBe(202);
    expect((await waitForRun(stack, ids.bWaiting, 30_000, B)).result).toEqual({ from: "b's partner" });
  });
});
