/**
 * How often a run's schema check lists a server's tools: once, then again only when the listing
 * may be stale (the server announced a change, the run waited, the session is new, or — for a
 * server that announces nothing — it is older than the bound). Never once per call: a server
 * with a thousand tools would be listed page by page before every call.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createSchemaWatch } from "../../src/activities/schema-watch.ts";
import { createMcpPool, type McpPool } from "../../src/mcp/index.ts";
import { startMcpServer, type StartMcpServerOptions, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool, manyTools } from "../helpers/mcp-test-tools.ts";
import { waitFor } from "../helpers/wait-for.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function countingServer(
  options: Omit<StartMcpServerOptions, "onRequest">,
): Promise<{ server: TestMcpServer; lists: () => number }> {
  let listRequests = 0;
  const server = await startMcpServer({
    ...options,
    onRequest: (info) => {
      if (info.method === "tools/list") listRequests++;
    },
  });
  cleanups.push(() => server.close());
  return { server, lists: () => listRequests };
}

function pool(): McpPool {
  const created = createMcpPool();
  cleanups.push(() => created.close());
  return created;
}

const check = (server: TestMcpServer, waits = 0, poolKey = "run_a") => ({
  url: server.url,
  headers: {},
  poolKey,
  tool: "echo",
  waits,
});

describe("schema watch", () => {
  it("lists a thousand tools once for many calls of a run", async () => {
    const { server, lists } = await countingServer({ tools: [echoTool(), ...manyTools(999)], pageSize: 100 });
    const watch = createSchemaWatch(pool());
    for (let i = 0; i < 20; i++) expect((await watch.current(check(server)))?.name).toBe("echo");
    expect(lists()).toBe(10);
  });

  it("lists again after the run waited", async () => {
    const { server, lists } = await countingServer({ tools: [echoTool()] });
    const watch = createSchemaWatch(pool());
    await watch.current(check(server, 0));
    await watch.current(check(server, 0));
    await watch.current(check(server, 1));
    await watch.current(check(server, 1));
    expect(lists()).toBe(2);
  });

  it("lists again once the server announces its tools changed, and sees the change", async () => {
    const { server, lists } = await countingServer({ tools: [echoTool()] });
    const watch = createSchemaWatch(pool());
    await watch.current(check(server));
    server.setTools([{ ...echoTool(), description: "changed" }]);
    await waitFor(
      "the watch to list the changed tool",
      async () => {
        await server.notifyToolsChanged();
        return (await watch.current(check(server)))?.description;
      },
      { timeoutMs: 5_000, until: (description) => description === "changed" },
    );
    expect(lists()).toBeGreaterThanOrEqual(2);
  });

  it("keeps listings of servers that announce changes past the age bound, but not of those that don't", async () => {
    const { server, lists } = await countingServer({ tools: [echoTool()] });
    // Long enough that two checks in a row on a loaded machine fall within it (50 ms did not).
    const AGE_BOUND_MS = 1_500;
    const watch = createSchemaWatch(pool(), { maxAgeMs: AGE_BOUND_MS });
    await watch.current(check(server));
    // Not a wait for something to happen: the listing's age passes the bound.
    await new Promise((resolve) => setTimeout(resolve, AGE_BOUND_MS + 100));
    await watch.current(check(server));
    // The test server offers tools.listChanged: its listing stays until it says otherwise.
    expect(lists()).toBe(1);
    const quiet = await countingServer({ tools: [echoTool()], announcesToolChanges: false });
    await watch.current(check(quiet.server, 0, "run_q"));
    await watch.current(check(quiet.server, 0, "run_q"));
    expect(quiet.lists()).toBe(1);
    // Not a wait for something to happen: the listing's age passes the bound.
    await new Promise((resolve) => setTimeout(resolve, AGE_BOUND_MS + 100));
    await watch.current(check(quiet.server, 0, "run_q"));
    expect(quiet.lists()).toBe(2);
  });

  it("each run lists on its own session", async () => {
    const { server, lists } = await countingServer({ tools: [echoTool()] });
    const watch = createSchemaWatch(pool());
    await watch.current(check(server, 0, "run_a"));
    await watch.current(check(server, 0, "run_b"));
    expect(lists()).toBe(2);
    expect(server.stats.sessionsOpened).toBe(2);
  });
});
