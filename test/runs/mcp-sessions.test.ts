/**
 * MCP sessions as runs see them, end to end: each run has its own session per server (a stateful
 * server's per-session state never crosses runs), a server that restarts mid-run and answers the
 * old session with 400 costs the run one more attempt and nothing else, a tool the server only
 * runs as a task is called as one, and the schema check lists a server's tools once per run
 * rather than once per call — and a run that has not waited starts from another run's fresh
 * opening listing of the same server and credentials, so a second run lists nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEverythingServer, type EverythingServer } from "../helpers/everything-server.ts";
import { startMcpServer, type TestMcpServer, type TestToolDefinition } from "../helpers/mcp-test-server.ts";
import { echoTool, effectCounterTool } from "../helpers/mcp-test-tools.ts";
import { expectRunGoing } from "../helpers/run-going.ts";
import {
  acceleratorsOn,
  startRewindStack,
  waitForRun,
  type ApiBody,
  type RewindStack,
} from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
let server: TestMcpServer;
let everything: EverythingServer;
let toolset: string;
let tasksToolset: string;
const effects = effectCounterTool();

/** Counts per MCP session, as a stateful server keeps a cart or a cursor per session. */
function sessionCounter(): TestToolDefinition {
  const counts = new Map<string, number>();
  return {
    name: "increment",
    inputSchema: { type: "object" },
    handler: async (_args, extra) => {
      const session = String(extra.headers["mcp-session-id"]);
      const count = (counts.get(session) ?? 0) + 1;
      counts.set(session, count);
      return { content: [{ type: "text", text: JSON.stringify({ count }) }] };
    },
  };
}

beforeAll(async () => {
  stack = await startRewindStack();
  server = await startMcpServer({
    tools: [
      sessionCounter(),
      echoTool(),
      effects.tool,
      {
        // Answers, then forgets every session, as a server restarting right after a call would.
        name: "restart",
        inputSchema: { type: "object" },
        handler: async () => {
          setTimeout(() => void server.dropSessions(), 0);
          return { content: [{ type: "text", text: "restarting" }] };
        },
      },
    ],
    unknownSessionStatus: 400,
  });
  everything = await startEverythingServer();
  toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
  tasksToolset = await registerToolset(stack, { mcpServers: { ref: { url: everything.url } } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await server?.close();
  await everything?.close();
});

async function run(script: string, on = toolset, group = "svc") {
  const id = await startRun(stack, {
    toolset: on,
    script: `import { ${group}, sleep } from "rewind:tools";\n${script}`,
  });
  return { id, ...(await waitForRun(stack, id, 60_000)) };
}

/** The run's journal; a query a loaded machine timed out is asked again, any other refusal fails the test. */
async function journalOf(id: string): Promise<{ seq: number; tool: string; attempts: number }[]> {
  for (let asked = 1; ; asked++) {
    const { status, body } = await stack.request("GET", `/v1/runs/${id}/journal`);
    if (status === 200)
      return (body as ApiBody & { entries: { seq: number; tool: string; attempts: number }[] }).entries;
    if (asked >= 5 || status < 500) throw new Error(`journal of ${id}: HTTP ${status} ${JSON.stringify(body)}`);
  }
}

describe("MCP sessions per run", () => {
  it("gives each run its own session: a stateful server's counts never cross runs", async () => {
    const script = `export default async function main() {
  const counts: number[] = [];
  for (let i = 0; i < 3; i++) counts.push(((await svc.increment({})) as { count: number }).count);
  return counts;
}`;
    const runs = await Promise.all([run(script), run(script), run(script)]);
    for (const done of runs) {
      expect(done.status).toBe("completed");
      expect(done.result).toEqual([1, 2, 3]);
    }
  });

  it.skipIf(!acceleratorsOn("spare-sessions"))(
    "starts a run on a session opened before it started, that no run had used",
    async () => {
      /** When each session was initialized (its `notifications/initialized`), by session id. */
      const initializedAt = new Map<string, number>();
      const counting = await startMcpServer({
        tools: [sessionCounter()],
        onRequest: (info) => {
          const session = info.headers["mcp-session-id"];
          if (info.method === "notifications/initialized" && session) initializedAt.set(session, Date.now());
        },
      });
      try {
        const own = await registerToolset(stack, { mcpServers: { svc: { url: counting.url } } });
        const script = `export default async function main() {
  const counts: number[] = [];
  for (let i = 0; i < 2; i++) counts.push(((await svc.increment({})) as { count: number }).count);
  return counts;
}`;
        const first = await run(script, own);
        expect(first.result).toEqual([1, 2]);
        // The spare for the next run opens a moment after the first run took its session.
        await waitFor("a spare session to open", () => initializedAt.size >= 2, { timeoutMs: 10_000 });
        const startedAt = Date.now();
        const second = await run(script, own);
        // A session of its own (its counts start at 1), initialized before the run was posted.
        expect(second.result).toEqual([1, 2]);
        const sessionOf = (id: unknown) =>
          counting.calls.find((c) => String(c.meta["codes.rewind/idempotency-key"]).startsWith(`${String(id)}/`))
            ?.sessionId;
        const secondSession = sessionOf(second.id);
        expect(secondSession).toBeDefined();
        expect(secondSession).not.toBe(sessionOf(first.id));
        expect(initializedAt.get(secondSession ?? "")).toBeLessThan(startedAt);
      } finally {
        await counting.close();
      }
    },
  );

  it("lists the server's tools once for a run's many calls, and a run started while that listing is fresh lists nothing", async () => {
    let lists = 0;
    const quiet = await startMcpServer({
      tools: [echoTool()],
      onRequest: (info) => {
        if (info.method === "tools/list") lists++;
      },
    });
    try {
      const own = await registerToolset(stack, { mcpServers: { svc: { url: quiet.url } } });
      const afterRegistration = lists;
      const many = `export default async function main() {
  for (let i = 0; i < 10; i++) await svc.echo({ message: String(i) });
  return "ok";
}`;
      expect((await run(many, own)).status).toBe("completed");
      expect(lists - afterRegistration).toBe(1);
      expect((await run(many, own)).status).toBe("completed");
      expect(lists - afterRegistration).toBe(1);
      // A run that waited lists again: a listing made before its wait may be stale.
      const slept = await run(
        `export default async function main() {
  await svc.echo({ message: "before" });
  await sleep("100ms");
  await svc.echo({ message: "after" });
  return "ok";
}`,
        own,
      );
      expect(slept.status).toBe("completed");
      expect(lists - afterRegistration).toBe(2);
    } finally {
      await quiet.close();
    }
  });

  it("a server that restarts mid-run and answers 400 for the old session costs the call one more attempt", async () => {
    const done = await run(`export default async function main() {
  await svc.restart({});
  return await svc.record_effect({ label: "after the restart" });
}`);
    expect(done.status).toBe("completed");
    const id = String(done.id);
    expect(done.result).toMatchObject({ key: `${id}/2` });
    expect((await journalOf(id)).find((e) => e.seq === 2)?.attempts).toBe(2);
    // The send on the forgotten session never ran: one effect, one session more.
    expect(effects.state.effects.get(`${id}/2`)).toBe(1);
  });

  it("a restart while the run slept costs nothing: the listing after the wait opens the new session", async () => {
    const id = await startRun(stack, {
      toolset,
      script: `import { svc, sleep } from "rewind:tools";
export default async function main() {
  await svc.record_effect({ label: "first" });
  await sleep("1s");
  return await svc.record_effect({ label: "second" });
}`,
    });
    await waitFor("the run to sleep", async () => (await journalOf(id)).some((e) => e.tool === "rewind.sleep"), {
      timeoutMs: 10_000,
    });
    // The sessions go while the run is going and its last call not yet sent.
    await expectRunGoing(stack.client, id, { calls: 3 });
    expect(effects.state.effects.has(`${id}/3`)).toBe(false);
    await server.dropSessions();
    const done = await waitForRun(stack, id, 30_000);
    expect(done.status).toBe("completed");
    expect((await journalOf(id)).find((e) => e.seq === 3)?.attempts).toBe(1);
    expect(effects.state.effects.get(`${id}/3`)).toBe(1);
  });
});

describe("tools the server runs as tasks", () => {
  it("calls a task-required tool as a task and gets the task's result", async () => {
    const done = await run(
      `export default async function main() {
  return await ref["simulate-research-query"]({ topic: "durable runs" });
}`,
      tasksToolset,
      "ref",
    );
    expect(done.status).toBe("completed");
    expect(JSON.stringify(done.result)).toContain("Research Report: durable runs");
  }, 60_000);
});
