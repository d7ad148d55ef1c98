/**
 * `GET /v1/runs` filters: by state (parked told apart from running through `RewindStatus`), by
 * toolset, by end user and by start time, one at a time and together, over runs in every state
 * of a namespace of its own. Each value reaches Temporal's visibility query validated and quoted:
 * a malformed value is a 400 naming its field, and a value written to break out of its quotes
 * matches nothing. A run that continued as new is listed once, with its first execution's start,
 * and the time filters go by that start.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_WORKFLOW_TYPE, SEARCH_ATTRIBUTES } from "../../src/shared/run.ts";
import { deliverSignal } from "../../src/workflows/run/messages.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { startRewindStack, waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

const key = `runs-list-key-${randomUUID()}`;
const auth = { authorization: `Bearer ${key}` };
let stack: RewindStack;
let server: TestMcpServer;
let plain: string;
let guarded: string;
/** Runs by what they are: each test filters and expects exactly these. */
const runs = { completed: "", parked: "", running: "", cancelled: "", failed: "", continued: "" };
/** Between the first run (`continued`) and the others. */
let divide: Date;
let continuedStartedAt: string;

const request = (method: string, route: string, body?: unknown) => stack.request(method, route, body, auth);

async function start(body: Record<string, unknown>): Promise<ApiBody> {
  const { status, body: run } = await request("POST", "/v1/runs", { toolset: plain, ...body });
  expect(status, JSON.stringify(run)).toBe(201);
  return run;
}

const WAIT = 'import { waitForSignal } from "rewind:tools";\nexport default async () => await waitForSignal("never");';
const CONTINUES = `import { sleep, waitForSignal } from "rewind:tools";
export default async function main() {
  await waitForSignal("go");
  for (let i = 0; i < 15; i++) await Promise.all([sleep(5), sleep("10ms")]);
  return "done";
}`;

beforeAll(async () => {
  stack = await startRewindStack({
    env: { REWIND_API_KEYS: `${key}:runs-list-${randomUUID().slice(0, 8)}`, REWIND_CONTINUE_AS_NEW_EVENTS: "60" },
  });
  server = await startMcpServer({
    tools: [
      {
        name: "create",
        inputSchema: { type: "object" },
        handler: async () => ({ content: [{ type: "text", text: "ok" }] }),
      },
    ],
  });
  const register = async (document: unknown) => String((await request("POST", "/v1/toolsets", document)).body.id);
  plain = await register({ mcpServers: { t: { url: server.url } } });
  guarded = await register({ mcpServers: { t: { url: server.url } }, policies: { "t.create": { approval: true } } });

  const continued = await start({ script: CONTINUES, endUser: "carol" });
  runs.continued = String(continued.id);
  continuedStartedAt = String(continued["startedAt"]);
  // Not waits for something to happen: a second on each side of the divide, so that a filter on
  // start times tells the first execution from the later ones.
  await new Promise((r) => setTimeout(r, 1_100));
  divide = new Date();
  await new Promise((r) => setTimeout(r, 1_100));
  // Every execution after its first starts after the divide.
  await stack.client.workflow.getHandle(runs.continued).signal(deliverSignal, { name: "go", payload: null });

  runs.completed = String((await start({ script: "export default async () => 1;", endUser: "alice" })).id);
  runs.parked = String(
    (
      await start({
        toolset: guarded,
        script: 'import { t } from "rewind:tools";\nexport default async () => await t.create({});',
        endUser: "alice",
      })
    ).id,
  );
  runs.running = String((await start({ script: WAIT, endUser: "bob" })).id);
  runs.cancelled = String((await start({ script: WAIT })).id);
  runs.failed = String(
    (await start({ script: 'export default async () => { throw new Error("no"); };', endUser: "o'brien" })).id,
  );

  expect((await request("POST", `/v1/runs/${runs.cancelled}/cancel`)).status).toBe(200);
  for (const id of [runs.completed, runs.cancelled, runs.failed, runs.continued])
    await waitForRun(stack, id, 120_000, auth);
  await waitFor(`run ${runs.parked} to park`, async () => (await request("GET", `/v1/runs/${runs.parked}`)).body, {
    until: (body) => body.status === "parked",
  });
}, 180_000);
afterAll(async () => {
  for (const id of [runs.parked, runs.running]) if (id) await request("POST", `/v1/runs/${id}/cancel`);
  await stack?.stop();
  await server?.close();
});

/** The ids a filtered list answers once visibility has caught up with `expected`. */
function listed(query: string, expected: string[]): Promise<string[]> {
  return waitFor(
    `GET /v1/runs?${query} to list ${expected.join(", ")}`,
    async () => {
      const { status, body } = await request("GET", `/v1/runs${query ? `?${query}` : ""}`);
      expect(status, JSON.stringify(body)).toBe(200);
      return (body.runs ?? []).map((r) => r.id);
    },
    { timeoutMs: 15_000, intervalMs: 250, until: (ids) => [...ids].sort().join() === [...expected].sort().join() },
  );
}

const sorted = (ids: string[]) => [...ids].sort();

describe("GET /v1/runs filters", () => {
  it("lists every run once, a continued one included, each with its state", async () => {
    const all = Object.values(runs);
    expect(sorted(await listed("", all))).toEqual(sorted(all));
    const { body } = await request("GET", "/v1/runs");
    const byId = new Map((body.runs ?? []).map((r) => [r.id, r as Record<string, unknown>]));
    expect(byId.get(runs.parked)).toMatchObject({ status: "parked", toolset: guarded, endUser: "alice" });
    expect(byId.get(runs.running)).toMatchObject({ status: "running", toolset: plain, endUser: "bob" });
    expect(byId.get(runs.completed)?.["closedAt"]).toBeTruthy();
  });

  it.each([
    ["parked", ["parked"]],
    ["running", ["running"]],
    ["completed", ["completed", "continued"]],
    ["failed", ["failed"]],
    ["cancelled", ["cancelled"]],
  ] as const)("by status=%s", async (status, which) => {
    const expected = which.map((w) => runs[w]);
    expect(sorted(await listed(`status=${status}`, expected))).toEqual(sorted(expected));
  });

  it("by toolset, by end user, and both with a status", async () => {
    expect(await listed(`toolset=${guarded}`, [runs.parked])).toEqual([runs.parked]);
    const alice = [runs.completed, runs.parked];
    expect(sorted(await listed("endUser=alice", alice))).toEqual(sorted(alice));
    expect(await listed(`endUser=${encodeURIComponent("o'brien")}`, [runs.failed])).toEqual([runs.failed]);
    expect(await listed(`toolset=${plain}&endUser=alice&status=completed`, [runs.completed])).toEqual([runs.completed]);
    expect(await listed(`toolset=${plain}&status=parked`, [])).toEqual([]);
  });

  it("by start time, the first execution's for a run that continued as new", async () => {
    expect(await listed(`startedBefore=${divide.toISOString()}`, [runs.continued])).toEqual([runs.continued]);
    const after = [runs.completed, runs.parked, runs.running, runs.cancelled, runs.failed];
    expect(sorted(await listed(`startedAfter=${encodeURIComponent(divide.toISOString())}`, after))).toEqual(
      sorted(after),
    );
    const window = `startedAfter=${new Date(divide.getTime() - 60_000).toISOString()}&startedBefore=${divide.toISOString()}&endUser=carol`;
    expect(await listed(window, [runs.continued])).toEqual([runs.continued]);
  });

  it("reports a continued run's first start as startedAt, in the list and on the run", async () => {
    const current = await stack.client.workflow.getHandle(runs.continued).describe();
    // The run did continue as new: its current execution started after the divide.
    expect(current.startTime.getTime()).toBeGreaterThan(divide.getTime());
    expect(current.memo).toEqual({ toolset: plain, endUser: "carol" });
    // Temporal keeps no static summary past continue-as-new: the current details carry it.
    const metadata = await stack.client.workflow
      .getHandle(runs.continued)
      .query<{ currentDetails?: string }>("__temporal_workflow_metadata");
    expect(metadata.currentDetails).toBe(
      `completed\nrun (continued as new): toolset ${plain.slice(0, 15)}… · end user carol`,
    );
    const { body } = await request("GET", `/v1/runs?endUser=carol`);
    expect(body.runs).toEqual([
      expect.objectContaining({ id: runs.continued, startedAt: continuedStartedAt, status: "completed" }),
    ]);
    expect((await request("GET", `/v1/runs/${runs.continued}`)).body["startedAt"]).toBe(continuedStartedAt);
  });

  it("answers 400 naming the field for a bad value, and a quote-breaking value matches nothing", async () => {
    const bad: [string, string][] = [
      ["status=bogus", "status"],
      ["status=parked'%20OR%20'1'%3D'1", "status"],
      [`toolset=${encodeURIComponent("x' OR '1'='1")}`, "toolset"],
      ["toolset=ts_123", "toolset"],
      ["startedAfter=yesterday", "startedAfter"],
      ["startedBefore=2026-13-40T00:00:00Z", "startedBefore"],
      [`endUser=${"e".repeat(201)}`, "endUser"],
      ["endUser=", "endUser"],
      ["owner=me", "(root)"],
    ];
    for (const [query, field] of bad) {
      const { status, body } = await request("GET", `/v1/runs?${query}`);
      expect(status, query).toBe(400);
      expect(
        (body.error?.details as { problems: { path: string }[] }).problems.map((p) => p.path),
        query,
      ).toContain(field);
    }
    for (const attempt of ["x' OR '1'='1", "x\\' OR RewindNamespace != '", "alice' OR WorkflowType = 'runScript"]) {
      const { status, body } = await request("GET", `/v1/runs?endUser=${encodeURIComponent(attempt)}`);
      expect(status, attempt).toBe(200);
      expect(body.runs, attempt).toEqual([]);
    }
  });

  it("filters a run started before RewindStartedAt existed by its execution's start", async () => {
    // Started as an earlier release's API did (no RewindStartedAt), on a queue no worker serves.
    const id = `run_old${randomUUID().replace(/-/g, "")}`;
    const namespace = String(
      (await stack.client.workflow.getHandle(runs.running).describe()).typedSearchAttributes.get(
        SEARCH_ATTRIBUTES.namespace,
      ),
    );
    const handle = await stack.client.workflow.start(RUN_WORKFLOW_TYPE, {
      workflowId: id,
      taskQueue: `nowhere-${randomUUID()}`,
      args: [],
      typedSearchAttributes: [
        { key: SEARCH_ATTRIBUTES.namespace, value: namespace },
        { key: SEARCH_ATTRIBUTES.toolset, value: plain },
        { key: SEARCH_ATTRIBUTES.status, value: "running" },
      ],
    });
    try {
      const startTime = (await handle.describe()).startTime;
      const after = [runs.completed, runs.parked, runs.running, runs.cancelled, runs.failed, id];
      expect(sorted(await listed(`startedAfter=${divide.toISOString()}`, after))).toEqual(sorted(after));
      expect(await listed(`startedBefore=${divide.toISOString()}`, [runs.continued])).toEqual([runs.continued]);
      const { body } = await request("GET", `/v1/runs?startedAfter=${new Date(startTime.getTime() - 1).toISOString()}`);
      expect(body.runs).toEqual([
        expect.objectContaining({ id, status: "running", startedAt: startTime.toISOString() }),
      ]);
    } finally {
      await handle.terminate();
    }
  });
});
