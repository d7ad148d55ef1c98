/**
 * What each test of a third-party MCP client against the front door stands on, so that each test
 * file says only what its client does: a real stack whose API has a key (clients authenticate as
 * they would against a deployed API), a real MCP tool server with `echo`, and two toolsets of it,
 * one plain and one whose `echo` waits for approval. The API listens on a port picked for the
 * file and a restart brings it back on the same port, so a client configured with the URL finds
 * it again, as it would a restarted API process. Besides the client, the tests only restart the
 * API and read runs, and approve a call through the API where the client can't.
 */
import { randomUUID } from "node:crypto";
import { startApi } from "../../src/cli/start-api.ts";
import { silentLogger } from "../../src/shared/logger.ts";
import { getFreePort } from "./free-port.ts";
import { startMcpServer, type TestMcpServer } from "./mcp-test-server.ts";
import { echoTool } from "./mcp-test-tools.ts";
import { startRewindStack, type ApiBody, type RewindStack } from "./rewind-stack.ts";
import { registerToolset } from "./toolset.ts";

/** A script calling `echo` once with its input's message: the plain run of every client. */
export const ECHO_SCRIPT =
  'import { tools } from "rewind:tools";\nexport default async (input: { message: string }) => tools.echo({ message: input.message });';

/** A script that sleeps `seconds` before it calls `echo`: longer than run_script waits for it. */
export const sleepingScript = (seconds: number): string =>
  `import { sleep, tools } from "rewind:tools";\nexport default async () => { await sleep("${seconds}s"); return tools.echo({ message: "slept" }); };`;

export interface FrontDoorStackOptions {
  /** How long run_script and get_run wait for a run (REWIND_MCP_WAIT_MS). */
  waitMs: number;
}

export interface FrontDoorStack {
  stack: RewindStack;
  /** The API key, for `Authorization: Bearer <key>`. */
  key: string;
  /** The API key's principal prefix, as the journal names who decided. */
  namespace: string;
  /** The front door of the plain toolset and of the one whose `echo` waits for approval. */
  urls: { plain: string; gated: string };
  /** Stops the API and starts a new one on the same port: its sessions are gone, the runs are Temporal's. */
  restartApi(): Promise<void>;
  /** Calls the API as it is now, with the key. */
  rest(method: string, route: string, body?: unknown): Promise<{ status: number; body: ApiBody }>;
  /** Approves the run's parked call `seq` through the API, as a harness would for a client that can't be asked. */
  approve(runId: string, seq: number): Promise<void>;
  /** The run's journal entries. */
  journal(runId: string): Promise<Record<string, unknown>[]>;
  stop(): Promise<void>;
}

export async function startFrontDoorStack(options: FrontDoorStackOptions): Promise<FrontDoorStack> {
  const key = `interop-${randomUUID()}`;
  const namespace = `interop${randomUUID().slice(0, 8)}`;
  const port = await getFreePort();
  const [stack, tools]: [RewindStack, TestMcpServer] = await Promise.all([
    startRewindStack({
      env: {
        REWIND_API_KEYS: `${key}:${namespace}`,
        REWIND_HOST: "127.0.0.1",
        REWIND_PORT: String(port),
        REWIND_MCP_WAIT_MS: String(options.waitMs),
      },
    }),
    startMcpServer({ tools: [echoTool()] }),
  ]);
  const auth = { authorization: `Bearer ${key}` };
  const servers = { mcpServers: { tools: { url: tools.url } } };
  const [plain, gated] = await Promise.all([
    registerToolset(stack, servers, auth),
    registerToolset(stack, { ...servers, policies: { "tools.echo": { approval: true } } }, auth),
  ]);
  const frontDoor = (toolset: string) => `${stack.api.url}/v1/toolsets/${toolset}/mcp`;

  async function rest(method: string, route: string, body?: unknown) {
    const response = await fetch(stack.api.url + route, {
      method,
      headers: { ...auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as ApiBody };
  }

  return {
    stack,
    key,
    namespace,
    urls: { plain: frontDoor(plain), gated: frontDoor(gated) },
    async restartApi() {
      await stack.api.stop();
      stack.api = await startApi(stack.config, stack.address, undefined, silentLogger);
      if (stack.api.url !== `http://127.0.0.1:${port}`)
        throw new Error(`the restarted API listens at ${stack.api.url}, not on port ${port}`);
    },
    rest,
    async approve(runId, seq) {
      const { status, body } = await rest("POST", `/v1/runs/${runId}/calls/${seq}/approve`, {});
      if (status !== 200)
        throw new Error(`approving call ${seq} of ${runId} answered ${status}: ${JSON.stringify(body)}`);
    },
    async journal(runId) {
      const { status, body } = await rest("GET", `/v1/runs/${runId}/journal`);
      if (status !== 200) throw new Error(`GET /v1/runs/${runId}/journal answered ${status}: ${JSON.stringify(body)}`);
      return body["entries"] as Record<string, unknown>[];
    },
    async stop() {
      await stack.stop();
      await tools.close();
    },
  };
}
