/**
 * What MCP servers in the wild do to a client, through the connection pool against real servers:
 * forget sessions and say so with 400 instead of 404, ask the client things in the middle of a
 * call (roots, ping, sampling, elicitation), report progress, announce tool changes, and run
 * tools as tasks that outlive the attempt that started them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createMcpPool,
  McpCallError,
  resultValue,
  type McpCallRequest,
  type McpElicitation,
  type McpPool,
  type McpProgress,
  type McpTaskHandle,
} from "../../src/mcp/index.ts";
import { startEverythingServer, type EverythingServer } from "../helpers/everything-server.ts";
import { perTestCleanup } from "../helpers/per-test-cleanup.ts";
import { echoTool, effectCounterTool } from "../helpers/mcp-test-tools.ts";
import { waitFor } from "../helpers/wait-for.ts";

const { defer, mcpServer } = perTestCleanup();

function pool(): McpPool {
  const created = createMcpPool();
  defer(() => created.close());
  return created;
}

const call = (on: McpPool, url: string, name: string, extra: Partial<McpCallRequest> = {}) =>
  on.callTool({ url, poolKey: url, name, arguments: {}, meta: {}, timeoutMs: 5_000, ...extra });

const OBJECT = { type: "object" } as const;

describe("a server that forgot the session", () => {
  it.each([400, 404] as const)(
    "answering %i: the call is sent once more on a new session, and the old one is never used again",
    async (status) => {
      const { tool, state } = effectCounterTool();
      const server = await mcpServer({ tools: [tool], unknownSessionStatus: status });
      const shared = pool();
      await call(shared, server.url, "record_effect", { meta: { "codes.rewind/idempotency-key": "run_a/1" } });
      await server.dropSessions();
      const outcome = await call(shared, server.url, "record_effect", {
        meta: { "codes.rewind/idempotency-key": "run_a/2" },
      });
      expect(outcome.resent).toBe(1);
      expect(state.total).toBe(2);
      const third = await call(shared, server.url, "record_effect", {
        meta: { "codes.rewind/idempotency-key": "run_a/3" },
      });
      expect(third.resent).toBeUndefined();
      expect(server.stats.initializeRequests).toBe(2);
      const [first, second, last] = [
        server.calls[0]?.sessionId,
        server.calls[1]?.sessionId,
        server.calls[2]?.sessionId,
      ];
      expect(second).not.toBe(first);
      expect(last).toBe(second);
    },
  );

  it("a 400 that is not about the session stays the tool's refusal", async () => {
    const server = await mcpServer({
      tools: [echoTool()],
      intercept: (info) =>
        info.method === "tools/call"
          ? {
              status: 400,
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ jsonrpc: "2.0", error: { code: -32602, message: "bad arguments" }, id: 1 }),
            }
          : undefined,
    });
    const error = await call(pool(), server.url, "echo").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpCallError);
    expect((error as McpCallError).reason).toBe("toolError");
    expect((error as McpCallError).sessionExpired).toBe(false);
    expect(server.stats.initializeRequests).toBe(1);
  });
});

describe("requests from the server in the middle of a call", () => {
  function askingTool(method: string, params?: Record<string, unknown>) {
    return {
      name: "ask",
      inputSchema: OBJECT,
      handler: async (
        _args: Record<string, unknown>,
        extra: { ask(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>> },
      ) => {
        try {
          const answer = await extra.ask(method, params);
          return { content: [{ type: "text" as const, text: JSON.stringify({ answer }) }] };
        } catch (error) {
          return {
            content: [
              {
                type: "text" as const,
                text: JSON.stringify({ error: error instanceof Error ? error.message : String(error) }),
              },
            ],
          };
        }
      },
    };
  }

  it("roots/list is answered with no roots", async () => {
    const server = await mcpServer({ tools: [askingTool("roots/list")] });
    const outcome = await call(pool(), server.url, "ask");
    expect(resultValue(outcome)).toEqual({ answer: { roots: [] } });
  });

  it("ping is answered", async () => {
    const server = await mcpServer({ tools: [askingTool("ping")] });
    expect(resultValue(await call(pool(), server.url, "ask"))).toEqual({ answer: {} });
  });

  it("sampling gets a clear JSON-RPC error at once, not a hang", async () => {
    const server = await mcpServer({
      tools: [
        askingTool("sampling/createMessage", {
          messages: [{ role: "user", content: { type: "text", text: "hi" } }],
          maxTokens: 10,
        }),
      ],
    });
    const started = Date.now();
    const value = resultValue(await call(pool(), server.url, "ask")) as { error: string };
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(value.error).toMatch(/sampling\/createMessage is not supported.*without a model/);
  });

  it("an elicitation goes to the call's hook, and its answer to the server", async () => {
    const requestedSchema = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
    const server = await mcpServer({
      tools: [askingTool("elicitation/create", { message: "Who are you?", requestedSchema })],
    });
    const seen: McpElicitation[] = [];
    const outcome = await call(pool(), server.url, "ask", {
      hooks: {
        onElicitation: async (request) => {
          seen.push(request);
          return { action: "accept", content: { name: "Ada" } };
        },
      },
    });
    expect(seen).toEqual([{ message: "Who are you?", requestedSchema }]);
    expect(resultValue(outcome)).toEqual({ answer: { action: "accept", content: { name: "Ada" } } });
  });

  it("an elicitation with no call to take it gets a JSON-RPC error", async () => {
    const server = await mcpServer({
      tools: [askingTool("elicitation/create", { message: "?", requestedSchema: { type: "object", properties: {} } })],
    });
    const value = resultValue(await call(pool(), server.url, "ask")) as { error: string };
    expect(value.error).toMatch(/no tool call of this session is waiting/);
  });

  it("the client declares roots and elicitation, not sampling", async () => {
    let capabilities: unknown;
    const server = await mcpServer({
      tools: [echoTool()],
      onRequest: (info) => {
        if (info.method === "initialize")
          capabilities = (info.body as { params?: { capabilities?: unknown } }).params?.capabilities;
      },
    });
    await call(pool(), server.url, "echo");
    expect(capabilities).toEqual({ roots: {}, elicitation: { form: {} } });
  });
});

describe("progress", () => {
  it("calls carry a progressToken and the server's progress reaches the hook", async () => {
    const server = await mcpServer({
      tools: [
        {
          name: "index",
          inputSchema: OBJECT,
          handler: async (_args, extra) => {
            for (let i = 1; i <= 3; i++) await extra.progress(i, 3, `step ${i}`);
            return { content: [{ type: "text", text: "done" }] };
          },
        },
      ],
    });
    const seen: McpProgress[] = [];
    await call(pool(), server.url, "index", { hooks: { onProgress: (progress) => seen.push(progress) } });
    expect(server.calls[0]?.meta["progressToken"]).toBeDefined();
    expect(seen).toEqual([
      { progress: 1, total: 3, message: "step 1" },
      { progress: 2, total: 3, message: "step 2" },
      { progress: 3, total: 3, message: "step 3" },
    ]);
  });
});

describe("tool listings", () => {
  it("stay fresh until the server announces a change", async () => {
    const server = await mcpServer({ tools: [echoTool()] });
    const shared = pool();
    const listing = await shared.listTools(server.url, undefined, server.url);
    expect(listing.notifiesChanges).toBe(true);
    expect(listing.fresh()).toBe(true);
    // The announcement travels on the session's standalone stream, opened after initialize.
    await waitFor(
      "the listing to go stale on the announcement",
      async () => {
        await server.notifyToolsChanged();
        return !listing.fresh();
      },
      { timeoutMs: 5_000 },
    );
  });
});

describe("tools run as tasks (the reference server's simulate-research-query)", () => {
  let everything: EverythingServer;
  beforeAll(async () => {
    everything = await startEverythingServer();
  }, 60_000);
  afterAll(async () => {
    await everything.close();
  });

  it("is listed as requiring a task, called as one, and its result is the call's", async () => {
    const shared = pool();
    const listing = await shared.listTools(everything.url, undefined, "tasks-a");
    expect(listing.tools.find((t) => t.name === "simulate-research-query")?.taskSupport).toBe("required");
    const created: McpTaskHandle[] = [];
    const outcome = await call(shared, everything.url, "simulate-research-query", {
      poolKey: "tasks-a",
      arguments: { topic: "durable execution" },
      timeoutMs: 30_000,
      task: { onCreated: (task) => created.push(task) },
    });
    expect(created).toHaveLength(1);
    expect(outcome.isError).toBe(false);
    expect(JSON.stringify(outcome.content)).toContain("Research Report: durable execution");
  }, 40_000);

  it("a later attempt (another pool, as after a worker restart) waits for the same task on its session", async () => {
    const first = createMcpPool();
    const created: McpTaskHandle[] = [];
    const abandoned = call(first, everything.url, "simulate-research-query", {
      poolKey: "tasks-b",
      arguments: { topic: "crash recovery" },
      timeoutMs: 30_000,
      task: { onCreated: (task) => created.push(task) },
    }).catch((error: unknown) => error);
    await waitFor("the task to be created", () => created.length > 0, { timeoutMs: 10_000 });
    expect(created).toHaveLength(1);
    // The worker "dies": its pool goes, but the session must outlive it for the task to be found.
    const handle = created[0] as McpTaskHandle;
    const second = pool();
    const outcome = await call(second, everything.url, "simulate-research-query", {
      poolKey: "tasks-b2",
      arguments: { topic: "crash recovery" },
      timeoutMs: 30_000,
      task: {
        resume: handle,
        onCreated: () => {
          throw new Error("must not create a task");
        },
      },
    });
    expect(JSON.stringify(outcome.content)).toContain("Research Report: crash recovery");
    await first.close();
    await abandoned;
  }, 40_000);

  it("cancelling the call cancels the task on the server", async () => {
    const shared = pool();
    const created: McpTaskHandle[] = [];
    const controller = new AbortController();
    const pending = call(shared, everything.url, "simulate-research-query", {
      poolKey: "tasks-c",
      arguments: { topic: "cancel me" },
      timeoutMs: 30_000,
      signal: controller.signal,
      task: { onCreated: (task) => created.push(task) },
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await waitFor("the task to be created", () => created.length > 0, { timeoutMs: 10_000 });
    expect(created).toHaveLength(1);
    controller.abort();
    const error = await pending;
    expect(error).toBeInstanceOf(McpCallError);
    expect((error as McpCallError).reason).toBe("cancelled");
    // Ask the task's session what became of it.
    const handle = created[0] as McpTaskHandle;
    const { openMcpConnection } = await import("../../src/mcp/index.ts");
    const probe = await openMcpConnection({ url: everything.url, timeoutMs: 5_000, sessionId: handle.sessionId });
    try {
      await waitFor(
        "the task to be cancelled",
        async () => (await probe.getTask(handle.taskId, { timeoutMs: 5_000 })).status,
        { timeoutMs: 5_000, until: (status) => status === "cancelled" },
      );
    } finally {
      await probe.close({ keepSession: true });
    }
  }, 40_000);
});
