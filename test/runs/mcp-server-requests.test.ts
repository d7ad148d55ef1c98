/**
 * What a server asks in the middle of a call, as a run lives it, end to end with real servers
 * made with the TypeScript SDK and with the Python SDK: an elicitation parks the run
 * (`elicitationRequested`) until the harness answers through the API, and the answer reaches the
 * tool; progress reaches the run's journal; roots and sampling are answered at once and never
 * wait for the call's timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPythonMcpServer, type PythonMcpServer } from "../helpers/python-mcp.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { startRewindStack, waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
let tsServer: TestMcpServer;
let pyServer: PythonMcpServer;
let tsToolset: string;
let pyToolset: string;

const PERSON = {
  type: "object",
  properties: { name: { type: "string" }, age: { type: "integer" } },
  required: ["name", "age"],
};

beforeAll(async () => {
  stack = await startRewindStack();
  tsServer = await startMcpServer({
    tools: [
      {
        name: "ask_person",
        inputSchema: { type: "object" },
        handler: async (_args, extra) => ({
          content: [
            {
              type: "text",
              text: JSON.stringify(
                await extra.ask("elicitation/create", { message: "Who are you?", requestedSchema: PERSON }),
              ),
            },
          ],
        }),
      },
      {
        name: "index",
        inputSchema: { type: "object" },
        handler: async (_args, extra) => {
          for (let i = 1; i <= 4; i++) {
            await extra.progress(i, 4, `batch ${i}`);
            await new Promise((resolve) => setTimeout(resolve, 400));
          }
          return { content: [{ type: "text", text: '{"indexed":4}' }] };
        },
      },
    ],
  });
  pyServer = await startPythonMcpServer();
  tsToolset = await registerToolset(stack, { mcpServers: { ts: { url: tsServer.url } } });
  pyToolset = await registerToolset(stack, { mcpServers: { py: { url: pyServer.url } } });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await tsServer?.close();
  await pyServer?.stop();
});

interface EntryView {
  seq: number;
  status: string;
  progress?: { progress: number; total?: number; message?: string };
  inputs?: { message: string; outcome?: string }[];
}

async function entry(id: string, seq: number): Promise<EntryView | undefined> {
  const { body } = await stack.request("GET", `/v1/runs/${id}/journal`);
  return ((body as ApiBody & { entries?: EntryView[] }).entries ?? []).find((e) => e.seq === seq);
}

function parkedForInput(id: string): Promise<ApiBody> {
  return waitFor(`run ${id} to park`, async () => (await stack.request("GET", `/v1/runs/${id}`)).body, {
    timeoutMs: 15_000,
    until: (view) => view.status === "parked",
  });
}

describe.each([
  { sdk: "TypeScript", group: "ts", tool: "ask_person", toolset: () => tsToolset, result: (r: unknown) => r },
  { sdk: "Python", group: "py", tool: "ask_elicitation", toolset: () => pyToolset, result: (r: unknown) => r },
])("elicitation from a $sdk SDK server", ({ group, tool, toolset }) => {
  it("parks the run until the harness answers; a misfit answer is refused and loses nothing", async () => {
    const id = await startRun(stack, {
      toolset: toolset(),
      script: `import { ${group} } from "rewind:tools";\nexport default async function main() { return await ${group}.${tool}({}); }`,
    });
    const parked = await parkedForInput(id);
    expect(parked["parked"]).toMatchObject([{ seq: 1, reason: "elicitationRequested" }]);
    expect((await entry(id, 1))?.inputs?.[0]?.message).toBe("Who are you?");
    const misfit = await stack.request("POST", `/v1/runs/${id}/calls/1/elicitation`, {
      action: "accept",
      content: { name: "Ada", age: "old" },
    });
    expect(misfit.status).toBe(422);
    expect((await stack.request("GET", `/v1/runs/${id}`)).body.status).toBe("parked");
    const answered = await stack.request("POST", `/v1/runs/${id}/calls/1/elicitation`, {
      action: "accept",
      content: { name: "Ada", age: 36 },
    });
    expect(answered.status).toBeLessThan(300);
    const done = await waitForRun(stack, id, 30_000);
    expect(done.status).toBe("completed");
    expect(JSON.stringify(done.result)).toContain("Ada");
    expect(JSON.stringify(done.result)).toContain("36");
  }, 60_000);

  it("a declined question reaches the tool as declined", async () => {
    const id = await startRun(stack, {
      toolset: toolset(),
      script: `import { ${group} } from "rewind:tools";\nexport default async function main() { return await ${group}.${tool}({}); }`,
    });
    await parkedForInput(id);
    expect(
      (await stack.request("POST", `/v1/runs/${id}/calls/1/elicitation`, { action: "decline" })).status,
    ).toBeLessThan(300);
    const done = await waitForRun(stack, id, 30_000);
    expect(done.status).toBe("completed");
    expect(JSON.stringify(done.result)).toContain("decline");
  }, 60_000);
});

describe("a question nobody answers", () => {
  it("is asked once, and the call ends timedOut for the user's silence, not the server's", async () => {
    const toolset = await registerToolset(stack, {
      mcpServers: { ts: { url: tsServer.url } },
      policies: { "ts.ask_person": { timeout: "3s" } },
    });
    const callsBefore = tsServer.calls.filter((c) => c.name === "ask_person").length;
    const id = await startRun(stack, {
      toolset,
      script: `import { ts, ToolError } from "rewind:tools";
export default async function main() {
  try { return await ts.ask_person({}); } catch (e) { const t = e as ToolError; return { code: t.code, message: t.message, details: t.details }; }
}`,
    });
    const done = await waitForRun(stack, id, 60_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    const result = done.result as { code: string; message: string; details: unknown };
    expect(result.code).toBe("timedOut");
    expect(result.details).toEqual({ reason: "questionUnanswered" });
    expect(result.message).toBe(
      `ts.ask_person: the user did not answer the server's question ("Who are you?") within the call's timeout of 3 s`,
    );
    // Put to the user once: one attempt, one question.
    expect(tsServer.calls.filter((c) => c.name === "ask_person").length - callsBefore).toBe(1);
    expect((await entry(id, 1))?.inputs).toHaveLength(1);
  }, 60_000);
});

describe("progress and the other server requests in a run", () => {
  it("the latest progress of a call in flight is in the journal", async () => {
    const id = await startRun(stack, {
      toolset: tsToolset,
      script: `import { ts } from "rewind:tools";\nexport default async function main() { return await ts.index({}); }`,
    });
    await waitFor("progress on call 1", async () => (await entry(id, 1))?.progress?.message, {
      timeoutMs: 10_000,
      until: (message) => /batch [1-4]/.test(message ?? ""),
    });
    const done = await waitForRun(stack, id, 30_000);
    expect(done.result).toEqual({ indexed: 4 });
    expect((await entry(id, 1))?.progress).toMatchObject({ progress: 4, total: 4, message: "batch 4" });
  }, 30_000);

  it("roots are answered and sampling refused at once (Python SDK server)", async () => {
    const started = Date.now();
    const id = await startRun(stack, {
      toolset: pyToolset,
      script: `import { py, ToolError } from "rewind:tools";
export default async function main() {
  const roots = await py.ask_roots({});
  try { await py.ask_sampling({ prompt: "hi" }); return { roots, sampled: true }; } catch (error) { return { roots, refused: (error as ToolError).message }; }
}`,
    });
    const done = await waitForRun(stack, id, 30_000);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(done.status).toBe("completed");
    expect(done.result).toMatchObject({
      roots: { result: [] },
      refused: expect.stringMatching(/sampling\/createMessage is not supported/),
    });
  }, 30_000);
});
