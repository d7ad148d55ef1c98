/**
 * What each test of a third-party MCP client against the front door stands on, so that each test
 * file says only what its client does: a real stack whose API has a key (clients authenticate as
 * they would against a deployed API), a real MCP tool server with `echo`, and two toolsets of it,
 * one plain and one whose `echo` waits for approval. The API listens on a port picked for the
 * file and a restart brings it back on the same port, so a client configured with the URL finds
 * it again, as it would a restarted API process. Besides the client, the tests only restart the
 * API, read runs, send a run the signal it waits for, and approve a call through the API where
 * the client can't.
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

/**
 * A script that waits for the signal `go` before it calls `echo` with the signal's message: it runs
 * longer than run_script waits for it, until the test sends the signal (`frontDoor.go`).
 */
export const WAITING_SCRIPT =
  'import { tools, waitForSignal } from "rewind:tools";\nexport default async () => {\n  const { message } = await waitForSignal<{ message: string }>("go", { timeout: "5m" });\n  return tools.echo({ message });\n};';

export interface FrontDoorStackOptions {
  /**
   * How long run_script and get_run wait for a run (REWIND_MCP_WAIT_MS). Default 3 s: time enough
   * for a parked call to be asked, approved and completed within one run_script call on a busy
   * machine, and what a run of WAITING_SCRIPT costs before run_script answers it running.
   */
  waitMs?: number;
}

export interface FrontDoorStack {
  stack: RewindStack;
  /** The API key, for `Authorization: Bearer <key>`. */
  key: string;
  /** The API key's namespace: its principal, which the journal names as who decided, is `<namespace>/key-…`. */
  namespace: string;
  /** The front door of the plain toolset and of the one whose `echo` waits for approval. */
  urls: { plain: string; gated: string };
  /** Stops the API and starts a new one on the same port: its sessions are gone, the runs are Temporal's. */
  restartApi(): Promise<void>;
  /** Calls the API as it is now, with the key. */
  rest(method: string, route: string, body?: unknown): Promise<{ status: number; body: ApiBody }>;
  /** Approves the run's parked call `seq` through the API, as a harness would for a client that can't be asked. */
  approve(runId: string, seq: number): Promise<void>;
  /** Sends the run the signal `go` with `message`, through the API (WAITING_SCRIPT then calls `echo`). */
  go(runId: string, message: string): Promise<void>;
  /** The run's journal entries. */
  journal(runId: string): Promise<Record<string, unknown>[]>;
  stop(): Promise<void>;
}

export async function startFrontDoorStack(options: FrontDoorStackOptions = {}): Promise<FrontDoorStack> {
  const key = `interop-${randomUUID()}`;
  const namespace = `interop${randomUUID().slice(0, 8)}`;
  const port = await getFreePort();
  const [stack, tools]: [RewindStack, TestMcpServer] = await Promise.all([
    startRewindStack({
      env: {
        REWIND_API_KEYS: `${key}:${namespace}`,
        REWIND_HOST: "127.0.0.1",
        REWIND_PORT: String(port),
        REWIND_MCP_WAIT_MS: String(options.waitMs ?? 3_000),
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
    async go(runId, message) {
      const { status, body } = await rest("POST", `/v1/runs/${runId}/signals/go`, { message });
      if (status !== 202) throw new Error(`signalling ${runId} answered ${status}: ${JSON.stringify(body)}`);
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
