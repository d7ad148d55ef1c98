/**
 * A Python SDK server asking the client things in the middle of a call, through the connection
 * pool: roots (always on the session's standalone GET stream), sampling on the call's stream and
 * on the standalone one, elicitation, and progress. Each is answered at once or reaches the
 * call's hooks; none waits for the call's timeout. What runs make of elicitation and progress
 * (parking, the journal) is tested in test/runs/mcp-server-requests.test.ts.
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
} from "../../src/mcp/index.ts";
import { startPythonMcpServer, type PythonMcpServer } from "../helpers/python-mcp.ts";

let server: PythonMcpServer;
let pool: McpPool;

beforeAll(async () => {
  server = await startPythonMcpServer();
  pool = createMcpPool();
}, 120_000);
afterAll(async () => {
  await pool?.close();
  await server?.stop();
});

let keys = 0;
const call = (name: string, extra: Partial<McpCallRequest> = {}) =>
  pool.callTool({
    url: server.url,
    poolKey: `py-${keys++}`,
    name,
    arguments: {},
    meta: {},
    timeoutMs: 10_000,
    ...extra,
  });

describe("Python SDK server (stateful, SSE): server-to-client requests", () => {
  it("roots/list on the standalone stream is answered with no roots", async () => {
    const outcome = await call("ask_roots");
    expect(outcome.isError).toBe(false);
    expect(resultValue(outcome)).toEqual({ result: [] });
  });

  it.each(["request", "standalone"])("sampling sent on the %s stream gets a clear error at once", async (via) => {
    const started = Date.now();
    // The Python SDK turns the client's JSON-RPC error into the tools/call's own error.
    const error = await call("ask_sampling", { arguments: { prompt: "hi", via } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(McpCallError);
    expect((error as McpCallError).reason).toBe("toolError");
    expect((error as McpCallError).message).toMatch(
      /sampling\/createMessage is not supported: Rewind runs scripts without a model/,
    );
  });

  it.each([
    {
      answer: { action: "accept" as const, content: { name: "Ada", age: 36 } },
      expected: { action: "accept", name: "Ada", age: 36 },
    },
    { answer: { action: "decline" as const }, expected: { action: "decline", name: null, age: null } },
    { answer: { action: "cancel" as const }, expected: { action: "cancel", name: null, age: null } },
  ])(
    "an elicitation reaches the call's hook, and the answer ($answer.action) the tool",
    async ({ answer, expected }) => {
      const seen: McpElicitation[] = [];
      const outcome = await call("ask_elicitation", {
        hooks: {
          onElicitation: async (request) => {
            seen.push(request);
            return answer;
          },
        },
      });
      expect(seen).toHaveLength(1);
      expect(seen[0]?.message).toBe("Who are you?");
      expect(seen[0]?.requestedSchema).toMatchObject({
        type: "object",
        properties: { name: { type: "string" }, age: { type: "integer" } },
      });
      expect(resultValue(outcome)).toEqual(expected);
    },
  );

  it("progress reaches the call's hook with the server's messages", async () => {
    const seen: McpProgress[] = [];
    const outcome = await call("slow_progress", {
      arguments: { steps: 3, delay_ms: 20 },
      hooks: { onProgress: (progress) => seen.push(progress) },
    });
    expect(resultValue(outcome)).toEqual({ result: 3 });
    expect(seen).toEqual([1, 2, 3].map((step) => ({ progress: step, total: 3, message: `step ${step} of 3` })));
  });
});
