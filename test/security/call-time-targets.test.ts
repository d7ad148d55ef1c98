/**
 * The outbound target policy at call time, in the worker: a toolset pinned while its server was
 * allowed is refused once it no longer is — its name now answers a private address, or the
 * operator stopped trusting it — with a ToolError(refused) the script can read, promptly, never
 * retried, and without a request reaching the server. Each step is a stack restarted on the same
 * task queue and namespace, as an operator would redeploy with another REWIND_TRUSTED_TARGETS.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tableResolver } from "../helpers/http-loopback.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";

const KEY = `call-targets-${randomUUID()}`;
const auth = { authorization: `Bearer ${KEY}` };
const TASK_QUEUE = `test-${randomUUID()}`;
const env = (trusted: string) => ({
  REWIND_API_KEYS: `${KEY}:calls-${randomUUID().slice(0, 8)}`,
  REWIND_TASK_QUEUE: TASK_QUEUE,
  REWIND_TRUSTED_TARGETS: trusted,
});

// What the script reads of a call's failure: enough to tell a refusal from anything else.
const SCRIPT = `import { server, ToolError } from "rewind:tools";
export default async () => {
  try { return { ok: (await server.echo({ message: "hi" }) as { args: unknown }).args }; }
  catch (e) { return e instanceof ToolError ? { code: e.code, reason: (e.details as { reason?: string } | undefined)?.reason, message: e.message } : { other: String(e) }; }
};`;

let answers = ["127.0.0.1"];
const resolver = tableResolver({ "mcp.flip.test": () => answers });
let mcp: TestMcpServer;
let stack: RewindStack | undefined;
let namespaceEnv: ReturnType<typeof env>;

beforeAll(async () => {
  mcp = await startMcpServer({ tools: [echoTool()] });
  namespaceEnv = env("127.0.0.1/32");
});
afterAll(async () => {
  await stack?.stop();
  await mcp?.close();
});

async function run(toolset: string): Promise<{ id: string; status?: string; result?: unknown; ms: number }> {
  if (!stack) throw new Error("no stack");
  const startedAt = Date.now();
  const started = await stack.request("POST", "/v1/runs", { toolset, script: SCRIPT }, auth);
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const done = await waitForRun(stack, String(started.body.id), 30_000, auth);
  return { id: String(started.body.id), status: done.status, result: done.result, ms: Date.now() - startedAt };
}

async function register(url: string): Promise<string> {
  if (!stack) throw new Error("no stack");
  const answer = await stack.request("POST", "/v1/toolsets", { mcpServers: { server: { url } } }, auth);
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return String(answer.body.id);
}

const refused = {
  code: "refused",
  reason: "targetNotAllowed",
  message: expect.stringMatching(/^server\.echo: .* is not an allowed target: .*; the call was not sent$/) as unknown,
};

describe("MCP calls under the outbound target policy", () => {
  it("refuses a call whose server's name now answers a private address, and the one whose server is no longer trusted", async () => {
    stack = await startRewindStack({ env: namespaceEnv, outbound: { resolve: resolver.resolve } });
    const byName = await register(`http://mcp.flip.test:${mcp.port}/mcp`);
    const byAddress = await register(`http://127.0.0.1:${mcp.port}/mcp`);
    expect(await run(byName)).toMatchObject({ status: "completed", result: { ok: { message: "hi" } } });
    expect(await run(byAddress)).toMatchObject({ status: "completed", result: { ok: { message: "hi" } } });
    const calls = mcp.calls.length;

    answers = ["10.20.30.40"];
    const flipped = await run(byName);
    expect(flipped).toMatchObject({ status: "completed", result: refused });
    expect(flipped.ms).toBeLessThan(10_000); // one attempt, no retries, no hang
    expect(mcp.calls).toHaveLength(calls);

    // The operator redeploys without trusting loopback: the same pinned toolset is refused at call time.
    await stack.stop();
    stack = await startRewindStack({
      env: { ...namespaceEnv, REWIND_TRUSTED_TARGETS: "" },
      outbound: { resolve: resolver.resolve },
    });
    const untrusted = await run(byAddress);
    expect(untrusted).toMatchObject({ status: "completed", result: refused });
    expect(untrusted.ms).toBeLessThan(10_000);
    expect(mcp.calls).toHaveLength(calls);
    const journal = await stack.request("GET", `/v1/runs/${untrusted.id}/journal`, undefined, auth);
    expect((journal.body["entries"] as { status?: string; attempts?: number }[])[0]).toMatchObject({
      status: "failed",
      attempts: 1,
    });
  });
});
