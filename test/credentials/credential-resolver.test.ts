/**
 * The resolver shares a credentials read already under way only with runs that started before
 * it began: a run that started after a write must get what was written, even while a read made
 * before the write (for an earlier run) has not reached the resolver yet. A real client
 * interceptor holds that read's answer back, so the order is certain.
 */
import { Client, type WorkflowClientInterceptor } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCredentialResolver, createSecretBox } from "../../src/credentials/index.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";
import { TEST_SECRET_KEY } from "../helpers/secret-key.ts";
import { registerToolset } from "../helpers/toolset.ts";

let stack: RewindStack;
let server: TestMcpServer;

beforeAll(async () => {
  stack = await startRewindStack();
  server = await startMcpServer({ tools: [echoTool()] });
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

const bearer = (token: string) => ({ mcpServers: { svc: { headers: { authorization: `Bearer ${token}` } } } });

describe("credential resolver", () => {
  it("does not hand a run that started after a write a read that began before it", async () => {
    const toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
    expect((await stack.request("PUT", `/v1/toolsets/${toolset}/credentials`, bearer("old"))).status).toBe(200);

    // The first query is answered at once but handed back only when released: it was read before
    // the write below and reaches the resolver after it.
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let firstAnswered = (): void => undefined;
    const answered = new Promise<void>((resolve) => (firstAnswered = resolve));
    let queries = 0;
    const holdFirstAnswer: WorkflowClientInterceptor = {
      async query(input, next) {
        queries += 1;
        const first = queries === 1;
        const answer = await next(input);
        if (first) {
          firstAnswered();
          await released;
        }
        return answer;
      },
    };
    const client = new Client({
      connection: stack.client.connection,
      namespace: stack.client.options.namespace,
      interceptors: { workflow: [holdFirstAnswer] },
    });
    const resolver = createCredentialResolver({ client, box: createSecretBox(TEST_SECRET_KEY) });

    const earlierRun = { namespace: "default", toolsetId: toolset, notBefore: Date.now() };
    const earlier = resolver.resolve(earlierRun, "svc");
    await answered;
    expect((await stack.request("PUT", `/v1/toolsets/${toolset}/credentials`, bearer("new"))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const laterRun = { namespace: "default", toolsetId: toolset, notBefore: Date.now() };
    const later = resolver.resolve(laterRun, "svc");
    release();

    // The later run read for itself; the earlier one got what was there when it read, and each
    // names the revision it was resolved against.
    expect(await later).toEqual({ scope: "toolset", headers: { authorization: "Bearer new" }, revisions: { own: 2 } });
    expect(await earlier).toEqual({
      scope: "toolset",
      headers: { authorization: "Bearer old" },
      revisions: { own: 1 },
    });
    expect(queries).toBe(2);

    // Within the cache's moment, a run that started before the latest read shares it: no query.
    expect(await resolver.resolve(laterRun, "svc")).toEqual({
      scope: "toolset",
      headers: { authorization: "Bearer new" },
      revisions: { own: 2 },
    });
    expect(queries).toBe(2);
  }, 60_000);
});
