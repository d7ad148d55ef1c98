/**
 * A toolset's MCP server (`/v1/toolsets/{id}/mcp`) driven by the official MCP client, against a
 * real stack: its four tools, runs that complete, fail, wait past the bounded wait or park for
 * approval (decided by the client's user through elicitation, or by the harness through the API
 * while the model reads `get_run`), a server's own question forwarded, and the refusals: a wrong
 * key, another namespace's toolset or session, bad arguments, a type error.
 */
import { randomUUID } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectFrontDoor,
  frontDoorClients,
  frontDoorUrl,
  textOf,
  type FrontDoorClient,
} from "../../helpers/front-door-client.ts";
import { startMcpServer, type TestMcpServer } from "../../helpers/mcp-test-server.ts";
import { askingTool, chargeOnRetryTool, echoTool, failingTool } from "../../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../../helpers/rewind-stack.ts";
import { registerToolset } from "../../helpers/toolset.ts";
import { waitFor } from "../../helpers/wait-for.ts";

const KEY = `fd-${randomUUID()}`;
const OTHER_KEY = `fd-other-${randomUUID()}`;
const NAMESPACE = `fd${randomUUID().slice(0, 8)}`;
const auth = { authorization: `Bearer ${KEY}` };
const PERSON = { type: "object", properties: { name: { type: "string" } }, required: ["name"] } as const;

let stack: RewindStack;
let server: TestMcpServer;
let toolset: string;
let gated: string;
let reviewed: string;
let otherToolset: string;
let unsure: string;
let payServer: TestMcpServer;
const clients = frontDoorClients(() => stack.api.url, { key: KEY });
const connect = clients.connect;
const started: string[] = [];

const register = (document: unknown, key = KEY) => registerToolset(stack, document, { authorization: `Bearer ${key}` });

const structured = (result: CallToolResult) => (result.structuredContent ?? {}) as Record<string, unknown>;

/** run_script, then get_run while the run is still running (a loaded machine may outlast the bounded wait). */
async function runToEnd(client: FrontDoorClient, args: Record<string, unknown>): Promise<CallToolResult> {
  const first = await client.call("run_script", args);
  const runId = structured(first)["runId"];
  if (typeof runId === "string") started.push(runId);
  if (structured(first)["status"] !== "running") return first;
  return waitFor(`run ${String(runId)} to end, read with get_run`, () => client.call("get_run", { runId }), {
    until: (result) => structured(result)["status"] !== "running",
    shown: textOf,
  });
}

beforeAll(async () => {
  [stack, server, payServer] = await Promise.all([
    startRewindStack({
      env: {
        REWIND_API_KEYS: `${KEY}:${NAMESPACE},${OTHER_KEY}:other${NAMESPACE}`,
        REWIND_MCP_WAIT_MS: "3000",
      },
    }),
    startMcpServer({
      tools: [
        echoTool(),
        failingTool("the ticket tracker is read-only today"),
        askingTool("ask_person", "Who are you?", PERSON),
      ],
    }),
    startMcpServer({ tools: [chargeOnRetryTool()] }),
  ]);
  const servers = { mcpServers: { tools: { url: server.url } } };
  [toolset, gated, reviewed, otherToolset, unsure] = await Promise.all([
    register(servers),
    register({ ...servers, policies: { "tools.echo": { approval: true } } }),
    register({ ...servers, scriptApproval: "required" }),
    // Another document: a toolset's id is its content's, and each namespace registering it has it.
    register({ mcpServers: { theirs: { url: server.url } } }, OTHER_KEY),
    register({
      mcpServers: { pay: { url: payServer.url } },
      policies: { "pay.charge": { onInterruption: "at_most_once", onUnknown: "park" } },
    }),
  ]);
}, 120_000);

afterAll(async () => {
  await clients.closeAll();
  for (const id of started) await stack?.request("POST", `/v1/runs/${id}/cancel`, undefined, auth);
  await stack?.stop();
  await server?.close();
  await payServer?.close();
});

describe("the four tools", () => {
  it("lists search_tools, describe_tools, run_script (a task when asked) and get_run; a small toolset's declarations are in run_script's description", async () => {
    const client = await connect(toolset);
    const { tools } = await client.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["search_tools", "describe_tools", "run_script", "get_run"]);
    const runScript = tools.find((t) => t.name === "run_script");
    expect(runScript?.execution).toEqual({ taskSupport: "optional" });
    expect(runScript?.description).toContain("# Writing a Rewind script");
    expect(runScript?.description).toContain("tools.echo(");
    expect(runScript?.inputSchema.required).toEqual(["script"]);
  });

  it("search_tools answers compact lines, best first; describe_tools the declarations of named tools, and names the unknown ones", async () => {
    const client = await connect(toolset);
    const found = await client.call("search_tools", { query: "return its arguments" });
    expect(textOf(found).split("\n")[0]).toMatch(/^tools\.echo · Returns its arguments/);
    const none = await client.call("search_tools", { query: "zeppelin" });
    expect([none.isError, textOf(none)]).toEqual([undefined, expect.stringContaining("No tool matches")]);
    const described = await client.call("describe_tools", { names: ["tools.echo"] });
    expect(textOf(described)).toContain("import { tools");
    expect(textOf(described)).toContain("tools.echo({ message?: string");
    expect(textOf(described)).not.toContain("tools.fail(");
    const unknown = await client.call("describe_tools", { names: ["tools.echo", "tools.nope"] });
    expect([unknown.isError, textOf(unknown)]).toEqual([true, expect.stringContaining("No tool tools.nope")]);
  });

  it("answers bad arguments as a tool error naming each problem", async () => {
    const client = await connect(toolset);
    const noScript = await client.call("run_script", { input: 1 });
    expect([noScript.isError, textOf(noScript)]).toEqual([true, expect.stringContaining("script")]);
    const badLimit = await client.call("search_tools", { query: "echo", limit: 0 });
    expect([badLimit.isError, textOf(badLimit)]).toEqual([true, expect.stringContaining("limit")]);
    const badRun = await client.call("get_run", { runId: "run_nope" });
    expect([badRun.isError, textOf(badRun)]).toEqual([true, "No run run_nope in this toolset."]);
  });
});

describe("run_script", () => {
  it("runs a script with a tool call to its end: structuredContent and a short text", async () => {
    const client = await connect(toolset);
    const result = await runToEnd(client, {
      script:
        'import { tools } from "rewind:tools";\n' +
        "export default async (input: { n: number }) => {\n" +
        '  const echoed = await tools.echo({ message: "hi" });\n' +
        "  return { doubled: input.n * 2, echoed };\n" +
        "};",
      input: { n: 21 },
    });
    expect(result.isError).toBeUndefined();
    expect(structured(result)).toMatchObject({
      status: "completed",
      result: { doubled: 42, echoed: { args: { message: "hi" } } },
    });
    expect(textOf(result)).toMatch(/^Run run_\w+ completed\. Result: \{"doubled":42/);
    const runId = String(structured(result)["runId"]);
    const rest = await stack.request("GET", `/v1/runs/${runId}`, undefined, auth);
    expect([rest.body.status, rest.body.toolset]).toEqual(["completed", toolset]);
  });

  it("answers a type error as a tool error with tsc's line and column, and starts nothing", async () => {
    const client = await connect(toolset);
    const result = await client.call("run_script", {
      script: 'import { tools } from "rewind:tools";\nexport default async () => tools.echo({ message: 42 });',
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^the script does not type-check \(line 2, column \d+: .*number.*string/);
    expect(textOf(result).split("\n")[1]).toMatch(/^line 2, column \d+: Type 'number' is not assignable/);
    expect(structured(result)["error"]).toMatchObject({ code: "typeCheckFailed" });
    expect(structured(result)["runId"]).toBeUndefined();
  });

  it("answers a failed run as a tool error with the error and the failing call, its arguments included", async () => {
    const client = await connect(toolset);
    const result = await runToEnd(client, {
      script:
        'import { tools } from "rewind:tools";\n' +
        'export default async () => { await tools.echo({}); return tools.fail({ ticket: "T-1" }); };',
    });
    expect(result.isError).toBe(true);
    expect(structured(result)).toMatchObject({
      status: "failed",
      error: { type: "ScriptFailed" },
      failingCall: { seq: 2, tool: "tools.fail", code: "toolFailed", args: { ticket: "T-1" } },
    });
    expect(textOf(result)).toContain('The failing call: 2 tools.fail({"ticket":"T-1"}) → toolFailed');
    expect(textOf(result)).toContain("the ticket tracker is read-only today");
  });

  it("answers a run that outlasts the bounded wait with its id and status; get_run reads it the same", async () => {
    const client = await connect(toolset);
    const result = await client.call("run_script", {
      script: 'import { sleep } from "rewind:tools";\nexport default async () => { await sleep("1h"); return 1; };',
    });
    const runId = String(structured(result)["runId"]);
    started.push(runId);
    expect([result.isError, structured(result)["status"]]).toEqual([undefined, "running"]);
    expect(textOf(result)).toContain(`get_run({"runId":"${runId}"})`);
    const read = await client.call("get_run", { runId });
    expect(structured(read)).toEqual({ runId, status: "running" });
  });
});

describe("a run parked for approval", () => {
  const parks = {
    script:
      'import { tools } from "rewind:tools";\n' + 'export default async () => tools.echo({ message: "ship it" });',
  };

  it("is asked of the client's user (elicitation): accepted, the call is sent and the journal names the decider as the API route would", async () => {
    const client = await connect(gated, { answer: () => ({ action: "accept", content: {} }) });
    const result = await runToEnd(client, parks);
    expect(structured(result)).toMatchObject({ status: "completed", result: { args: { message: "ship it" } } });
    expect(client.asked).toHaveLength(1);
    expect(client.asked[0]?.message).toMatch(/wants to call tools\.echo with \{"message":"ship it"\}/);
    expect((client.asked[0] as { requestedSchema?: unknown } | undefined)?.requestedSchema).toEqual({
      type: "object",
      properties: {},
    });
    const runId = String(structured(result)["runId"]);
    const viaMcp = (await stack.request("GET", `/v1/runs/${runId}/journal`, undefined, auth)).body["entries"] as {
      decidedBy?: Record<string, unknown>;
      approved?: boolean;
    }[];

    // The same run approved through the API's route records the same decider.
    const rest = await stack.request("POST", "/v1/runs", { ...parks, toolset: gated }, auth);
    started.push(String(rest.body.id));
    await waitFor(`run ${String(rest.body.id)} to park`, () =>
      stack.request("GET", `/v1/runs/${String(rest.body.id)}`, undefined, auth).then((r) => r.body.status === "parked"),
    );
    expect((await stack.request("POST", `/v1/runs/${String(rest.body.id)}/calls/1/approve`, {}, auth)).status).toBe(
      200,
    );
    await waitForRun(stack, String(rest.body.id), 30_000, auth);
    const viaRest = (await stack.request("GET", `/v1/runs/${String(rest.body.id)}/journal`, undefined, auth)).body[
      "entries"
    ] as { decidedBy?: Record<string, unknown>; approved?: boolean }[];
    const shape = (entry: { decidedBy?: Record<string, unknown>; approved?: boolean } | undefined) => ({
      approved: entry?.approved,
      decidedBy: { ...entry?.decidedBy, at: typeof entry?.decidedBy?.["at"] },
    });
    expect(shape(viaMcp[0])).toEqual(shape(viaRest[0]));
    expect(shape(viaMcp[0])).toEqual({
      approved: true,
      decidedBy: {
        principal: expect.stringMatching(new RegExp(`^${NAMESPACE}/key-[0-9a-f]{8}$`)),
        decision: "approved",
        at: "number",
      },
    });
  });

  it("declined by the client's user, the call is rejected: the script gets ToolError rejected", async () => {
    const client = await connect(gated, { answer: () => ({ action: "decline" }), endUser: "ada" });
    const result = await runToEnd(client, {
      script:
        'import { tools, ToolError } from "rewind:tools";\n' +
        "export default async () => {\n" +
        '  try { await tools.echo({ message: "no" }); return "sent"; }\n' +
        "  catch (e) { return e instanceof ToolError ? e.code : String(e); }\n" +
        "};",
    });
    expect(structured(result)).toMatchObject({ status: "completed", result: "rejected" });
    const runId = String(structured(result)["runId"]);
    const entries = (await stack.request("GET", `/v1/runs/${runId}/journal`, undefined, auth)).body["entries"] as {
      decidedBy?: Record<string, unknown>;
    }[];
    expect(entries[0]?.decidedBy).toMatchObject({ by: "ada", decision: "rejected" });
  });

  it("without elicitation, answers at once that it is parked and why; the harness approves through the API and get_run reads the result", async () => {
    const client = await connect(gated);
    const parked = await client.call("run_script", parks);
    const runId = String(structured(parked)["runId"]);
    started.push(runId);
    expect(structured(parked)).toEqual({
      runId,
      status: "parked",
      waitingFor: ["call 1 tools.echo waits for approval"],
    });
    expect(textOf(parked)).toContain("is parked: call 1 tools.echo waits for approval");
    const decided = await stack.request("POST", `/v1/runs/${runId}/calls/1/approve`, { by: "reviewer" }, auth);
    expect(decided.status).toBe(200);
    const done = await waitFor(`run ${runId} to complete, read with get_run`, () => client.call("get_run", { runId }), {
      until: (result) => structured(result)["status"] === "completed",
      shown: textOf,
    });
    expect(structured(done)).toMatchObject({ runId, status: "completed", result: { args: { message: "ship it" } } });
  });
});

describe("progress", () => {
  it("tells a client that sent a progress token what the run does as it changes: running, then what it waits for", async () => {
    const client = await connect(gated);
    const told: { progress: number; message?: string }[] = [];
    const result = (await client.client.callTool(
      {
        name: "run_script",
        arguments: {
          script:
            'import { tools, sleep } from "rewind:tools";\n' +
            'export default async () => { await sleep("1s"); return tools.echo({ message: "later" }); };',
        },
      },
      undefined,
      { onprogress: (progress) => told.push(progress) },
    )) as CallToolResult;
    const runId = String(structured(result)["runId"]);
    started.push(runId);
    expect(structured(result)).toMatchObject({ status: "parked" });
    expect(told.map((p) => p.message)).toEqual([
      `Run ${runId} is running.`,
      `Run ${runId} is parked: call 2 tools.echo waits for approval.`,
    ]);
    expect(told.map((p) => p.progress)).toEqual([1, 2]);
  });
});

describe("a run waiting for its script's approval", () => {
  const script = 'import { tools } from "rewind:tools";\nexport default async () => (await tools.echo({}), "ran");';

  it("shows the client's user the script: accepted, it runs; declined, it fails ScriptRejected and never ran", async () => {
    const yes = await connect(reviewed, { answer: () => ({ action: "accept", content: {} }) });
    const ran = await runToEnd(yes, { script });
    expect(structured(ran)).toMatchObject({ status: "completed", result: "ran" });
    expect(yes.asked[0]?.message).toMatch(/waits for its script to be approved before it starts/);
    expect(yes.asked[0]?.message).toContain("tools.echo({})");

    const no = await connect(reviewed, { answer: () => ({ action: "decline" }) });
    const rejected = await runToEnd(no, { script });
    expect([rejected.isError, structured(rejected)["error"]]).toEqual([
      true,
      expect.objectContaining({ type: "ScriptRejected" }),
    ]);
    const runId = String(structured(rejected)["runId"]);
    const journal = await stack.request("GET", `/v1/runs/${runId}/journal`, undefined, auth);
    expect(journal.body["entries"]).toEqual([]);
  });
});

describe("a call whose outcome is unknown", () => {
  const charge =
    'import { pay, ToolError } from "rewind:tools";\n' +
    "export default async () => {\n" +
    "  try { return await pay.charge({ amount: 5 }); }\n" +
    "  catch (e) { return e instanceof ToolError ? e.code : String(e); }\n" +
    "};";

  it("asks the client's user to send it again or fail it: retry sends it with the same key, fail gives the script outcomeUnknown", async () => {
    const retried = await connect(unsure, { answer: () => ({ action: "accept", content: { decision: "retry" } }) });
    const sent = await runToEnd(retried, { script: charge });
    expect(structured(sent)).toMatchObject({ status: "completed", result: { charged: true, attempt: 2 } });
    expect(retried.asked[0]?.message).toMatch(
      /called pay\.charge with \{"amount":5\}, and the attempt ended without an answer/,
    );
    expect((retried.asked[0] as { requestedSchema?: unknown } | undefined)?.requestedSchema).toMatchObject({
      properties: { decision: { enum: ["retry", "fail"] } },
      required: ["decision"],
    });
    const runId = String(structured(sent)["runId"]);
    const entries = (await stack.request("GET", `/v1/runs/${runId}/journal`, undefined, auth)).body["entries"] as {
      decidedBy?: Record<string, unknown>;
    }[];
    expect(entries[0]?.decidedBy).toMatchObject({ decision: "retried", principal: expect.stringContaining(NAMESPACE) });

    const failed = await connect(unsure, { answer: () => ({ action: "accept", content: { decision: "fail" } }) });
    expect(structured(await runToEnd(failed, { script: charge }))).toMatchObject({
      status: "completed",
      result: "outcomeUnknown",
    });
  });

  it("declined, the call stays parked for the harness, which decides it through the API", async () => {
    const client = await connect(unsure, { answer: () => ({ action: "decline" }) });
    const first = await client.call("run_script", { script: charge });
    const runId = String(structured(first)["runId"]);
    started.push(runId);
    await waitFor(`run ${runId} to park on its unknown outcome, asked once`, async () => {
      const view = await stack.request("GET", `/v1/runs/${runId}`, undefined, auth);
      return view.body.status === "parked" && client.asked.length > 0;
    });
    expect((await client.call("get_run", { runId })).structuredContent).toMatchObject({ status: "parked" });
    expect((await stack.request("POST", `/v1/runs/${runId}/calls/1/retry`, {}, auth)).status).toBe(200);
    expect((await waitForRun(stack, runId, 30_000, auth)).result).toEqual({ charged: true, attempt: 2 });
  });
});

describe("a call whose tool is gone from its server", () => {
  it("asks whether to send it anyway; declined, the script gets ToolError schemaChanged", async () => {
    const notes = await startMcpServer({ tools: [echoTool("note")] });
    try {
      const changing = await register({ mcpServers: { notes: { url: notes.url } } });
      const client = await connect(changing, { answer: () => ({ action: "decline" }) });
      const first = await client.call("run_script", {
        script:
          'import { notes, sleep, ToolError } from "rewind:tools";\n' +
          "export default async () => {\n" +
          '  await notes.note({ message: "first" });\n' +
          '  await sleep("3s");\n' +
          '  try { await notes.note({ message: "second" }); return "sent"; }\n' +
          "  catch (e) { return e instanceof ToolError ? e.code : String(e); }\n" +
          "};",
      });
      const runId = String(structured(first)["runId"]);
      started.push(runId);
      await waitFor("the first call at the server", () => notes.calls.length > 0, { intervalMs: 50 });
      notes.setTools([]);
      const ended = await waitFor(`run ${runId} to end, read with get_run`, () => client.call("get_run", { runId }), {
        until: (result) => structured(result)["status"] !== "running" && structured(result)["status"] !== "parked",
        shown: textOf,
      });
      expect(structured(ended)).toMatchObject({ status: "completed", result: "schemaChanged" });
      expect(client.asked[0]?.message).toMatch(
        /wants to call notes\.note with \{"message":"second"\}, but its server no longer lists that tool/,
      );
      expect(notes.calls).toHaveLength(1);
    } finally {
      await notes.close();
    }
  });
});

describe("a server's own question", () => {
  it("is forwarded to the client's user, and their answer goes back to the server", async () => {
    const client = await connect(toolset, { answer: () => ({ action: "accept", content: { name: "Ada" } }) });
    const result = await runToEnd(client, {
      script: 'import { tools } from "rewind:tools";\nexport default async () => tools.ask_person({});',
    });
    expect(client.asked.map((q) => [q.message, (q as { requestedSchema?: unknown }).requestedSchema])).toEqual([
      ["Who are you?", PERSON],
    ]);
    expect(structured(result)).toMatchObject({
      status: "completed",
      result: { action: "accept", content: { name: "Ada" } },
    });
  });
});

describe("who may connect", () => {
  it("refuses a wrong key with 401, another namespace's toolset with 404, and a session under another scope with 404", async () => {
    const url = frontDoorUrl(stack.api.url, toolset);
    await expect(connectFrontDoor(url, { key: "not-a-key" })).rejects.toMatchObject({ code: 401 });
    await expect(connectFrontDoor(url)).rejects.toMatchObject({ code: 401 });
    await expect(connectFrontDoor(frontDoorUrl(stack.api.url, otherToolset), { key: KEY })).rejects.toMatchObject({
      code: 404,
    });
    const client = await connect(toolset);
    const sessionId = (client.client.transport as { sessionId?: string } | undefined)?.sessionId ?? "";
    expect(sessionId).not.toBe("");
    const post = (headers: Record<string, string>) =>
      fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-11-25",
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
    const asEndUser = await post({ authorization: `Bearer ${KEY}`, "x-rewind-end-user": "eve" });
    expect([asEndUser.status, ((await asEndUser.json()) as { error: { message: string } }).error.message]).toEqual([
      404,
      "Session not found",
    ]);
    const ok = await post({ authorization: `Bearer ${KEY}` });
    expect(ok.status).toBe(200);
    await ok.body?.cancel();
  });

  it("sees only its scope's runs: get_run of a run of another toolset, or of another end user, is not found", async () => {
    const other = await stack.request(
      "POST",
      "/v1/runs",
      { script: "export default async () => 1;", toolset: gated, endUser: "bob" },
      auth,
    );
    const runId = String(other.body.id);
    await waitForRun(stack, runId, 30_000, auth);
    const here = await connect(toolset);
    expect(textOf(await here.call("get_run", { runId }))).toBe(`No run ${runId} in this toolset.`);
    const asAda = await connect(gated, { endUser: "ada" });
    expect(textOf(await asAda.call("get_run", { runId }))).toBe(`No run ${runId} in this toolset.`);
    const asBob = await connect(gated, { endUser: "bob" });
    expect(structured(await asBob.call("get_run", { runId }))).toEqual({ runId, status: "completed", result: 1 });
  });
});
