/**
 * Credentials as the spec orders them, server by server: each MCP server of a run gets the
 * headers of the first scope (run, end user, toolset) that has credentials for it, whatever
 * other servers resolve to; a run's own credentials are renewed through the API and wake its
 * parked calls; a fork takes new ones or inherits the renewed ones; a derived toolset stands on
 * its base's credentials behind its own; and a call sent with none resumes once any are written.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiClient } from "../../src/sdk/index.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { IDEMPOTENCY_KEY, echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

const key = `scopes-key-${randomUUID()}`;
const auth = { authorization: `Bearer ${key}` };
let stack: RewindStack;
/** Two servers that each accept one token only. */
let alpha: TestMcpServer;
let beta: TestMcpServer;
const ALPHA = "Bearer alpha-good";
const BETA = "Bearer beta-good";

const request = (method: string, route: string, body?: unknown) => stack.request(method, route, body, auth);
const bearer = (token: string) => ({ headers: { authorization: token } });

beforeAll(async () => {
  stack = await startRewindStack({ env: { REWIND_API_KEYS: `${key}:scopes-${randomUUID().slice(0, 8)}` } });
  alpha = await startMcpServer({ tools: [echoTool("whoami")], requiredAuthorization: ALPHA });
  beta = await startMcpServer({ tools: [echoTool("whoami")], requiredAuthorization: BETA });
});
afterAll(async () => {
  await stack?.stop();
  await Promise.all([alpha?.close(), beta?.close()]);
});

/**
 * A toolset of both servers, registered with good credentials for both (the listing needs them),
 * then left with these as the toolset's own.
 */
async function toolsetOf(
  credentials: Record<string, { headers: Record<string, string> }> = { sa: bearer(ALPHA), sb: bearer(BETA) },
): Promise<string> {
  const registered = await request("POST", "/v1/toolsets", {
    mcpServers: { sa: { url: alpha.url }, sb: { url: beta.url } },
    credentials: { mcpServers: { sa: bearer(ALPHA), sb: bearer(BETA) } },
  });
  expect([200, 201], JSON.stringify(registered.body)).toContain(registered.status);
  const id = String(registered.body.id);
  expect((await request("PUT", `/v1/toolsets/${id}/credentials`, { mcpServers: credentials })).status).toBe(200);
  return id;
}

const BOTH = `import { sa, sb } from "rewind:tools";
export default async () => { await sa.whoami({}); await sb.whoami({}); return "done"; };`;
const ALPHA_ONLY = `import { sa } from "rewind:tools";
export default async () => { await sa.whoami({}); return "done"; };`;

async function start(body: Record<string, unknown>): Promise<string> {
  const started = await request("POST", "/v1/runs", body);
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return String(started.body.id);
}

async function journalOf(id: string): Promise<{ seq: number; tool: string; credentials?: string }[]> {
  const { status, body } = await request("GET", `/v1/runs/${id}/journal`);
  expect(status, JSON.stringify(body)).toBe(200);
  return body["entries"] as { seq: number; tool: string; credentials?: string }[];
}

async function waitParked(id: string): Promise<{ seq: number; reason: string; details: Record<string, unknown> }[]> {
  const body = await waitFor(`run ${id} to park`, async () => (await request("GET", `/v1/runs/${id}`)).body, {
    timeoutMs: 20_000,
    until: (view) => view["status"] === "parked",
  });
  return (body["parked"] ?? []) as { seq: number; reason: string; details: Record<string, unknown> }[];
}

const keysSeenBy = (server: TestMcpServer, id: string) =>
  server.calls
    .filter((c) => String(c.meta[IDEMPOTENCY_KEY]).startsWith(`${id}/`))
    .map((c) => ({ key: c.meta[IDEMPOTENCY_KEY], authorization: c.headers["authorization"] }));

describe("credentials resolve server by server", () => {
  it("a run's own credentials for one server leave the other server to the toolset's", async () => {
    const toolset = await toolsetOf({ sa: bearer("Bearer alpha-stale"), sb: bearer(BETA) });
    const id = await start({ toolset, script: BOTH, credentials: { mcpServers: { sa: bearer(ALPHA) } } });
    const done = await waitForRun(stack, id, 30_000, auth);
    expect(done.status, JSON.stringify(done)).toBe("completed");
    expect(keysSeenBy(alpha, id)).toEqual([{ key: `${id}/1`, authorization: ALPHA }]);
    expect(keysSeenBy(beta, id)).toEqual([{ key: `${id}/2`, authorization: BETA }]);
    // The journal names the scope each call used, never its values.
    expect((await journalOf(id)).map((e) => [e.seq, e.credentials])).toEqual([
      [1, "run"],
      [2, "toolset"],
    ]);
  });

  it("an end user's credentials for one server leave the other to the toolset's", async () => {
    const toolset = await toolsetOf({ sa: bearer("Bearer alpha-stale"), sb: bearer(BETA) });
    // Written through the SDK, as a harness would.
    const sdk = createApiClient({ url: stack.api.url, apiKey: key });
    expect(await sdk.setToolsetCredentials(toolset, { mcpServers: { sa: bearer(ALPHA) } }, "carol")).toEqual({
      resumedRuns: 0,
    });
    const id = await start({ toolset, script: BOTH, endUser: "carol" });
    expect((await waitForRun(stack, id, 30_000, auth)).status).toBe("completed");
    expect((await journalOf(id)).map((e) => e.credentials)).toEqual(["endUser", "toolset"]);
  });
});

describe("a run's own credentials", () => {
  it("are renewed through the API: the parked call is sent again with the same key, and only then", async () => {
    const toolset = await toolsetOf();
    const id = await start({
      toolset,
      script: BOTH,
      credentials: { mcpServers: { sa: bearer("Bearer alpha-expired") } },
    });
    const parked = await waitParked(id);
    expect(parked).toEqual([
      expect.objectContaining({
        seq: 1,
        reason: "credentialsExpired",
        details: expect.objectContaining({ scope: "run" }),
      }),
    ]);

    // The toolset's valid credentials do not stand in for the run's own, and do not wake it.
    expect(
      (
        await request("PUT", `/v1/toolsets/${toolset}/credentials`, {
          mcpServers: { sa: bearer(ALPHA), sb: bearer(BETA) },
        })
      ).status,
    ).toBe(200);
    // Not a wait for something to happen: the period in which the toolset's write must not wake the run.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await request("GET", `/v1/runs/${id}`)).body["status"]).toBe("parked");

    // Bad renewals lose nothing: a server the toolset lacks, a malformed body, another run.
    expect((await request("PUT", `/v1/runs/${id}/credentials`, { mcpServers: { nope: bearer("x") } })).status).toBe(
      400,
    );
    expect((await request("PUT", `/v1/runs/${id}/credentials`, { servers: {} })).status).toBe(400);
    expect(
      (await request("PUT", `/v1/runs/run_${"0".repeat(26)}/credentials`, { mcpServers: { sa: bearer(ALPHA) } }))
        .status,
    ).toBe(404);
    expect((await request("GET", `/v1/runs/${id}`)).body["status"]).toBe("parked");

    const renewed = await createApiClient({ url: stack.api.url, apiKey: key }).renewRunCredentials(id, {
      mcpServers: { sa: bearer(ALPHA) },
    });
    expect(renewed).toEqual({ runId: id, scope: "run" });
    const done = await waitForRun(stack, id, 30_000, auth);
    expect(done.status, JSON.stringify(done)).toBe("completed");
    expect(keysSeenBy(alpha, id)).toEqual([{ key: `${id}/1`, authorization: ALPHA }]);
    expect((await journalOf(id)).map((e) => e.credentials)).toEqual(["run", "toolset"]);
    // Once the run ended there is nothing to renew.
    expect((await request("PUT", `/v1/runs/${id}/credentials`, { mcpServers: { sa: bearer(ALPHA) } })).status).toBe(
      409,
    );

    // A fork inherits the renewed credentials, not the expired ones it started with…
    const inherited = await request("POST", `/v1/runs/${id}/fork`, {
      script: ALPHA_ONLY.replace("sa.whoami({})", "sa.whoami({ n: 1 })"),
    });
    expect(inherited.status, JSON.stringify(inherited.body)).toBe(201);
    const inheritedId = String(inherited.body.id);
    expect((await waitForRun(stack, inheritedId, 30_000, auth)).status).toBe("completed");
    expect((await journalOf(inheritedId))[0]).toMatchObject({ credentials: "run" });

    // …and takes new ones when given: expired ones here, so its call parks on the run scope.
    const forked = await request("POST", `/v1/runs/${id}/fork`, {
      script: ALPHA_ONLY.replace("sa.whoami({})", "sa.whoami({ n: 2 })"),
      credentials: { mcpServers: { sa: bearer("Bearer alpha-expired-again") } },
    });
    expect(forked.status, JSON.stringify(forked.body)).toBe(201);
    const forkedId = String(forked.body.id);
    expect(await waitParked(forkedId)).toEqual([
      expect.objectContaining({ reason: "credentialsExpired", details: expect.objectContaining({ scope: "run" }) }),
    ]);
    expect(
      (
        await request("POST", `/v1/runs/${id}/fork`, {
          script: ALPHA_ONLY,
          credentials: { mcpServers: { elsewhere: bearer("x") } },
        })
      ).status,
    ).toBe(400);
    await request("POST", `/v1/runs/${forkedId}/cancel`);
  }, 90_000);
});

describe("derived toolsets", () => {
  it("run on their base's credentials, their own first, and wake when the base's are renewed", async () => {
    const base = await toolsetOf({ sa: bearer(ALPHA), sb: bearer(BETA) });
    const derivedOf = async (workflows: Record<string, string> = {}) => {
      const registered = await request("POST", "/v1/toolsets", { base, workflows });
      expect([200, 201], JSON.stringify(registered.body)).toContain(registered.status);
      return String(registered.body.id);
    };
    const derived = await derivedOf();
    const first = await start({ toolset: derived, script: BOTH });
    expect((await waitForRun(stack, first, 30_000, auth)).status).toBe("completed");
    expect((await journalOf(first)).map((e) => e.credentials)).toEqual(["toolset", "toolset"]);

    // The base's credentials expire: a run of the derived toolset parks, and renewing the base's wakes it.
    expect(
      (
        await request("PUT", `/v1/toolsets/${base}/credentials`, {
          mcpServers: { sa: bearer("Bearer alpha-expired"), sb: bearer(BETA) },
        })
      ).status,
    ).toBe(200);
    const second = await start({ toolset: derived, script: BOTH });
    expect(await waitParked(second)).toEqual([
      expect.objectContaining({
        seq: 1,
        reason: "credentialsExpired",
        details: expect.objectContaining({ scope: "toolset" }),
      }),
    ]);
    const renewed = await request("PUT", `/v1/toolsets/${base}/credentials`, {
      mcpServers: { sa: bearer(ALPHA), sb: bearer(BETA) },
    });
    expect(renewed.body).toMatchObject({ resumedRuns: 1 });
    expect((await waitForRun(stack, second, 30_000, auth)).status).toBe("completed");
    expect(keysSeenBy(alpha, second)).toEqual([{ key: `${second}/1`, authorization: ALPHA }]);

    // The derived toolset's own credentials come before its base's, server by server.
    expect(
      (
        await request("PUT", `/v1/toolsets/${base}/credentials`, {
          mcpServers: { sa: bearer("Bearer alpha-expired"), sb: bearer(BETA) },
        })
      ).status,
    ).toBe(200);
    expect(
      (await request("PUT", `/v1/toolsets/${derived}/credentials`, { mcpServers: { sa: bearer(ALPHA) } })).status,
    ).toBe(200);
    const third = await start({ toolset: derived, script: BOTH });
    expect((await waitForRun(stack, third, 30_000, auth)).status).toBe("completed");
    expect(keysSeenBy(beta, third)).toEqual([{ key: `${third}/2`, authorization: BETA }]);
  }, 90_000);
});

describe("a call sent with no credentials at all", () => {
  it("parks on the 401 and resumes when credentials for its server are written", async () => {
    const toolset = await toolsetOf({ sb: bearer(BETA) });
    const id = await start({ toolset, script: ALPHA_ONLY });
    expect(await waitParked(id)).toEqual([
      expect.objectContaining({
        seq: 1,
        reason: "credentialsExpired",
        details: expect.objectContaining({ scope: null }),
      }),
    ]);
    const written = await request("PUT", `/v1/toolsets/${toolset}/credentials`, {
      mcpServers: { sa: bearer(ALPHA), sb: bearer(BETA) },
    });
    expect(written.body).toMatchObject({ resumedRuns: 1 });
    expect((await waitForRun(stack, id, 30_000, auth)).status).toBe("completed");
    expect((await journalOf(id))[0]).toMatchObject({ credentials: "toolset" });
  }, 60_000);
});

describe("renewed run credentials across continue-as-new", () => {
  it("are the ones the continued run uses", async () => {
    const continuing = await startRewindStack({
      env: { REWIND_API_KEYS: `${key}:scopes-can-${randomUUID().slice(0, 8)}`, REWIND_CONTINUE_AS_NEW_EVENTS: "60" },
    });
    try {
      const call = (method: string, route: string, body?: unknown) => continuing.request(method, route, body, auth);
      const registered = await call("POST", "/v1/toolsets", {
        mcpServers: { sa: { url: alpha.url } },
        credentials: { mcpServers: { sa: bearer(ALPHA) } },
      });
      const started = await call("POST", "/v1/runs", {
        toolset: registered.body.id,
        credentials: { mcpServers: { sa: bearer("Bearer alpha-expired") } },
        script: `import { sa } from "rewind:tools";
export default async () => { for (let i = 0; i < 30; i++) await sa.whoami({ i }); return "done"; };`,
      });
      const id = String(started.body.id);
      await waitFor(`run ${id} to park`, async () => (await call("GET", `/v1/runs/${id}`)).body, {
        timeoutMs: 20_000,
        until: (view) => view["status"] === "parked",
      });
      expect((await call("PUT", `/v1/runs/${id}/credentials`, { mcpServers: { sa: bearer(ALPHA) } })).status).toBe(200);
      expect((await waitForRun(continuing, id, 60_000, auth)).status).toBe("completed");
      const executions: string[] = [];
      for await (const execution of continuing.client.workflow.list({ query: `WorkflowId = '${id}'` }))
        executions.push(execution.runId);
      // It did continue as new, and no call after the renewal parked again on the expired token.
      expect(executions.length).toBeGreaterThan(1);
      const seen = keysSeenBy(alpha, id);
      expect(seen).toHaveLength(30);
      expect(seen.every((c) => c.authorization === ALPHA)).toBe(true);
    } finally {
      await continuing.stop();
    }
  }, 90_000);
});
