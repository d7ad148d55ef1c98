/**
 * The sessions a run's first step needs, opened while its workflow task completes: one per MCP
 * server its calls go to, under the key the call's activity will look for, with the credentials
 * the run resolves for that server; nothing for refused calls, built-ins or groups the toolset
 * lacks; a failure to resolve costs nothing but the head start; and a run forgotten while its
 * credentials were read (its start failed) gets no session.
 */
import { afterEach, describe, expect, it } from "vitest";
import { sessionKeys } from "../../src/activities/call-mcp-tool.ts";
import { createSessionOpener } from "../../src/activities/session-opener.ts";
import type { CredentialResolver } from "../../src/credentials/index.ts";
import { createMcpPool, type McpPool } from "../../src/mcp/index.ts";
import { EMPTY_TOOLSET, type CredentialRef, type IssuedCall, type PinnedToolset } from "../../src/shared/index.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { waitFor } from "../helpers/wait-for.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function serverAndPool(): Promise<{ server: TestMcpServer; pool: McpPool }> {
  const server = await startMcpServer({ tools: [echoTool()] });
  const pool = createMcpPool({});
  cleanups.push(
    () => pool.close(),
    () => server.close(),
  );
  return { server, pool };
}

const ref: CredentialRef = { namespace: "tenant-a", toolsetId: "ts_1" };

function toolsetWith(url: string): PinnedToolset {
  // `other` is only called refused: no session for it.
  return { ...EMPTY_TOOLSET, mcpServers: { svc: { url, tools: [] }, other: { url, tools: [] } } };
}

/** Resolves `svc` to a bearer token, and records which servers were asked for. */
function resolverAsked(asked: string[], fails = false): CredentialResolver {
  return {
    async resolve(_ref, server) {
      asked.push(server);
      if (fails) throw new Error("the credentials could not be read");
      return { scope: "toolset", headers: { authorization: `Bearer ${server}-token` } };
    },
  };
}

const calls: IssuedCall[] = [
  { seq: 1, tool: "svc.echo", args: { i: 1 } },
  { seq: 2, tool: "svc.echo", args: { i: 2 } },
  { seq: 3, tool: "gone.echo", args: {} },
  { seq: 4, tool: "http.get", args: { url: "http://127.0.0.1/" } },
  {
    seq: 5,
    tool: "other.echo",
    args: {},
    refused: { code: "invalidArguments", message: "no", tool: "other.echo", seq: 5 },
  },
];

/** Calls `echo` under the key the run's call would use, as its activity would. */
async function callAs(pool: McpPool, server: TestMcpServer, runId: string, authorization: string): Promise<void> {
  const headers = { authorization };
  await pool.callTool({
    url: server.url,
    headers,
    poolKey: sessionKeys(ref.namespace, runId, server.url, headers).poolKey,
    name: "echo",
    arguments: { i: 1 },
    meta: {},
    timeoutMs: 5_000,
  });
}

describe("session opener", () => {
  it("opens one session per server the step's calls go to, under the key the call will use", async () => {
    const { server, pool } = await serverAndPool();
    const asked: string[] = [];
    createSessionOpener({ mcpPool: pool, credentials: resolverAsked(asked) }).open({
      runId: "run_a",
      credentials: ref,
      toolset: toolsetWith(server.url),
      calls,
    });
    await waitFor("the session to open", () => server.stats.sessionsOpened === 1, { timeoutMs: 5_000 });
    expect(asked).toEqual(["svc"]);
    await callAs(pool, server, "run_a", "Bearer svc-token");
    expect(server.stats.initializeRequests).toBe(1);
    expect(server.calls.map((call) => call.headers.authorization)).toEqual(["Bearer svc-token"]);
  });

  it("opens nothing when the run's credentials can't be resolved, and never throws", async () => {
    const { server, pool } = await serverAndPool();
    const asked: string[] = [];
    expect(() =>
      createSessionOpener({ mcpPool: pool, credentials: resolverAsked(asked, true) }).open({
        runId: "run_b",
        credentials: ref,
        toolset: toolsetWith(server.url),
        calls,
      }),
    ).not.toThrow();
    await waitFor("the resolver to be asked", () => asked.length === 1, { timeoutMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.stats.initializeRequests).toBe(0);
  });

  it("does not open the sessions of a run forgotten while its credentials were being read", async () => {
    const { server, pool } = await serverAndPool();
    let answer = (): void => undefined;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const held: CredentialResolver = {
      async resolve() {
        await answered;
        return { scope: "toolset", headers: { authorization: "Bearer held" } };
      },
    };
    const opener = createSessionOpener({ mcpPool: pool, credentials: held });
    const step = (runId: string) => ({ runId, credentials: ref, toolset: toolsetWith(server.url), calls });
    opener.open(step("run_forgotten"));
    opener.open(step("run_kept"));
    opener.forget(ref.namespace, "run_forgotten");
    answer();
    // The kept run's session opens; the forgotten one's never does.
    await waitFor("the kept run's session to open", () => server.stats.sessionsOpened, {
      timeoutMs: 5_000,
      until: (n) => n >= 1,
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.stats.sessionsOpened).toBe(1);
    // It is the kept run's: a call under its key opens no other session.
    await callAs(pool, server, "run_kept", "Bearer held");
    expect(server.stats.sessionsOpened).toBe(1);

    // Forgetting only holds for reads under way: the same run id's next step opens its session.
    opener.open(step("run_forgotten"));
    await waitFor("a later step's session to open", () => server.stats.sessionsOpened, {
      timeoutMs: 5_000,
      until: (n) => n >= 2,
    });
  });
});
