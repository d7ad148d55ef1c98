/**
 * `run_script` as an MCP task (2025-11-25), driven by the official MCP client against a real
 * stack: the task is the run, so it answers at once, its state is the run's (a run parked for
 * approval is `input_required`), it outlives the API process that made it (read, approved
 * through the client's elicitation and its result taken from a new API object on a fresh
 * connection), `tasks/cancel` cancels the run, `tasks/list` lists the scope's runs, and what
 * can't be a task is refused with MCP's errors.
 */
import { randomUUID } from "node:crypto";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  McpError,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi } from "../../../src/cli/start-api.ts";
import { silentLogger } from "../../../src/shared/logger.ts";
import { frontDoorClients, type FrontDoorClient } from "../../helpers/front-door-client.ts";
import { startMcpServer, type TestMcpServer } from "../../helpers/mcp-test-server.ts";
import { askingTool, echoTool } from "../../helpers/mcp-test-tools.ts";
import { startRewindStack, type ApiBody, type RewindStack } from "../../helpers/rewind-stack.ts";
import { registerToolset } from "../../helpers/toolset.ts";
import { waitFor } from "../../helpers/wait-for.ts";

const KEY = `fdt-${randomUUID()}`;
const NAMESPACE = `fdt${randomUUID().slice(0, 8)}`;
const auth = { authorization: `Bearer ${KEY}` };
const RELATED_TASK = "io.modelcontextprotocol/related-task";

let stack: RewindStack;
let server: TestMcpServer;
let toolset: string;
let gated: string;
const clients = frontDoorClients(() => stack.api.url, { key: KEY });
const connect = clients.connect;
const started: string[] = [];

/** The API as it is now (the stack's own `request` keeps the first API object's address). */
async function rest(method: string, route: string, body?: unknown): Promise<{ status: number; body: ApiBody }> {
  const response = await fetch(stack.api.url + route, {
    method,
    headers: { ...auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as ApiBody };
}

const register = (document: unknown) => registerToolset(stack, document, auth);

/** A task-augmented `tools/call`: the task, as the server answered it at once. */
async function startTask(client: FrontDoorClient, name: string, args: Record<string, unknown>) {
  const { task } = await client.client.request(
    { method: "tools/call", params: { name, arguments: args, task: {} } },
    CreateTaskResultSchema,
  );
  if (task.taskId.startsWith("run_")) started.push(task.taskId);
  return task;
}

const taskResult = (client: FrontDoorClient, taskId: string): Promise<CallToolResult> =>
  client.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);

/** The MCP error a promise rejects with. */
async function mcpError(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  const { code, message } = error as McpError;
  return { code, message };
}

beforeAll(async () => {
  [stack, server] = await Promise.all([
    startRewindStack({ env: { REWIND_API_KEYS: `${KEY}:${NAMESPACE}`, REWIND_MCP_WAIT_MS: "3000" } }),
    startMcpServer({
      tools: [
        echoTool(),
        askingTool("ask_color", "Which color?", { type: "object", properties: { color: { type: "string" } } }),
      ],
    }),
  ]);
  const servers = { mcpServers: { tools: { url: server.url } } };
  [toolset, gated] = await Promise.all([
    register(servers),
    register({ ...servers, policies: { "tools.echo": { approval: true } } }),
  ]);
}, 120_000);

afterAll(async () => {
  await clients.closeAll();
  for (const id of started) await rest("POST", `/v1/runs/${id}/cancel`).catch(() => undefined);
  await stack?.stop();
  await server?.close();
});

describe("run_script as a task", () => {
  it("answers a working task at once; tasks/get follows the run; tasks/result answers what run_script would", async () => {
    const client = await connect(toolset);
    const task = await startTask(client, "run_script", {
      script:
        'import { tools } from "rewind:tools";\nexport default async () => (await tools.echo({ message: "t" }), 7);',
    });
    expect(task).toMatchObject({ taskId: expect.stringMatching(/^run_/), status: "working", ttl: null });
    const result = await taskResult(client, task.taskId);
    expect(result.structuredContent).toEqual({ runId: task.taskId, status: "completed", result: 7 });
    expect(result._meta?.[RELATED_TASK]).toEqual({ taskId: task.taskId });
    expect(await client.client.experimental.tasks.getTask(task.taskId)).toMatchObject({
      taskId: task.taskId,
      status: "completed",
    });
  });

  it("is failed when the run fails, and its result is the failed run's tool error", async () => {
    const client = await connect(toolset);
    const task = await startTask(client, "run_script", {
      script: 'export default async () => { throw new Error("no tickets today"); };',
    });
    const result = await taskResult(client, task.taskId);
    expect([result.isError, result.structuredContent?.["status"]]).toEqual([true, "failed"]);
    expect(await client.client.experimental.tasks.getTask(task.taskId)).toMatchObject({
      status: "failed",
      statusMessage: expect.stringContaining("no tickets today"),
    });
  });

  it("outlives the API: a parked task is input_required, then read, approved and its result taken through a new API object on a fresh connection", async () => {
    const first = await connect(gated);
    const task = await startTask(first, "run_script", {
      script:
        'import { tools } from "rewind:tools";\nexport default async () => tools.echo({ message: "after restart" });',
    });
    await waitFor(
      `task ${task.taskId} to wait for approval`,
      () => first.client.experimental.tasks.getTask(task.taskId),
      { until: (t) => t.status === "input_required" },
    );
    await first.close();

    await stack.api.stop();
    stack.api = await startApi(stack.config, stack.address, undefined, silentLogger);

    const second = await connect(gated, { answer: () => ({ action: "accept", content: {} }) });
    expect(await second.client.experimental.tasks.getTask(task.taskId)).toMatchObject({
      status: "input_required",
      statusMessage: "call 1 tools.echo waits for approval",
    });
    const { tasks } = await second.client.experimental.tasks.listTasks();
    expect(tasks.map((t) => t.taskId)).toContain(task.taskId);
    const result = await taskResult(second, task.taskId);
    expect(result.structuredContent).toMatchObject({
      status: "completed",
      result: { args: { message: "after restart" } },
    });
    expect(second.asked.map((q) => q._meta?.[RELATED_TASK])).toEqual([{ taskId: task.taskId }]);
    const entries = (await rest("GET", `/v1/runs/${task.taskId}/journal`)).body["entries"] as {
      approved?: boolean;
      decidedBy?: { principal?: string; decision?: string };
    }[];
    expect(entries[0]).toMatchObject({
      approved: true,
      decidedBy: { principal: expect.stringMatching(new RegExp(`^${NAMESPACE}/key-`)), decision: "approved" },
    });

    const third = await connect(gated);
    expect(await third.client.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: "completed" });
    expect((await taskResult(third, task.taskId)).structuredContent).toMatchObject({ status: "completed" });
  });

  it("forwards a server's question to the client's user while tasks/result waits, naming the task", async () => {
    const client = await connect(toolset, { answer: () => ({ action: "accept", content: { color: "teal" } }) });
    const task = await startTask(client, "run_script", {
      script: 'import { tools } from "rewind:tools";\nexport default async () => tools.ask_color({});',
    });
    const result = await taskResult(client, task.taskId);
    expect(result.structuredContent).toMatchObject({
      status: "completed",
      result: { action: "accept", content: { color: "teal" } },
    });
    expect(client.asked.map((q) => [q.message, q._meta?.[RELATED_TASK]])).toEqual([
      ["Which color?", { taskId: task.taskId }],
    ]);
  });

  it("tasks/cancel cancels the run; a cancelled task can't be cancelled again", async () => {
    const client = await connect(toolset);
    const task = await startTask(client, "run_script", {
      script: 'import { sleep } from "rewind:tools";\nexport default async () => { await sleep("1h"); };',
    });
    const cancelled = await client.client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: "cancelled" });
    expect((await rest("GET", `/v1/runs/${task.taskId}`)).body.status).toBe("cancelled");
    expect(await mcpError(client.client.experimental.tasks.cancelTask(task.taskId))).toMatchObject({ code: -32602 });
    const result = await taskResult(client, task.taskId);
    expect([result.isError, result.structuredContent?.["status"]]).toEqual([true, "cancelled"]);
  });
});

describe("what can't be a task", () => {
  it("refuses a script that does not type-check with -32602 and tsc's positions, starting nothing", async () => {
    const client = await connect(toolset);
    const refused = await mcpError(
      startTask(client, "run_script", { script: "export default async (input: { n: number }) => input.n.foo;" }),
    );
    expect(refused.code).toBe(-32602);
    expect(refused.message).toMatch(/does not type-check \(line 1, column \d+: Property 'foo' does not exist/);
  });

  it("refuses bad arguments with -32602, another tool as a task with -32601, and a task the scope does not have with -32602", async () => {
    const client = await connect(toolset);
    expect(await mcpError(startTask(client, "run_script", { input: 1 }))).toMatchObject({ code: -32602 });
    expect(await mcpError(startTask(client, "search_tools", { query: "echo" }))).toMatchObject({ code: -32601 });
    expect(await mcpError(startTask(client, "nope", {}))).toMatchObject({ code: -32602 });
    expect(await mcpError(client.client.experimental.tasks.getTask("run_0123456789ABCDEFGHJK"))).toMatchObject({
      code: -32602,
    });
    const elsewhere = await rest("POST", "/v1/runs", { script: "export default async () => 1;", toolset: gated });
    const otherRun = String(elsewhere.body.id);
    expect(await mcpError(client.client.experimental.tasks.getTask(otherRun))).toMatchObject({ code: -32602 });
    expect(await mcpError(taskResult(client, otherRun))).toMatchObject({ code: -32602 });
    expect(await mcpError(client.client.experimental.tasks.listTasks("not-a-cursor"))).toMatchObject({ code: -32602 });
  });
});
