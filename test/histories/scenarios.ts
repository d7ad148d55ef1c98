/**
 * Runs that cover every feature and every way a run waits or ends, driven through the API only,
 * so the same list serves two purposes: recording the replay corpus (each run started, left
 * waiting, resolved, its histories kept) and the upgrade test (runs started and left waiting on
 * one release's stack, resolved on another's). A scenario knows how to start its run, how to
 * tell that it waits the way it is about, what resolves the wait, and how the run must end.
 */
import type { TestMcpServer, TestToolDefinition } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { waitFor } from "../helpers/wait-for.ts";

export interface ApiAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** What scenarios talk to; the servers outlive any one Rewind stack. */
export interface ScenarioWorld {
  /** The API of the stack under test; `continueAsNew` selects the one with a low continue-as-new threshold. */
  api(method: string, route: string, body?: unknown, options?: { continueAsNew?: boolean }): Promise<ApiAnswer>;
  /** Base URL of the API (webhook URLs are rewritten onto it). */
  apiUrl(): string;
  /** An MCP server with echo, record_effect, flaky (drops its first attempt), once and fail. */
  mcp: TestMcpServer;
  /** A billing MCP server whose effects can be undone: charge and refund, hold and release. */
  billing: TestMcpServer;
  /** An MCP server that answers 401 unless the credentials are `Bearer fresh-token`. */
  guarded: TestMcpServer;
  /** An MCP server whose create_ticket schema a scenario changes under a sleeping run. */
  changing: TestMcpServer;
  /** `host:port` that the http tool resolves to a loopback server answering JSON. */
  httpHost: string;
  /** Task queue of a host tool worker serving harness.ask (yes) and harness.flaky (fails attempt 1). */
  hostTaskQueue: string;
}

export interface ScenarioOptions {
  /** How long timers and signal timeouts in scenarios last: short to record, long across an upgrade. */
  waitMs: number;
}

export interface Expected {
  status: "completed" | "failed" | "cancelled" | "rolledBack";
  result?: unknown;
  /** A part of the run's error message. */
  error?: string;
}

export interface Scenario {
  name: string;
  /**
   * The first commit whose API the scenario needs (a route or field that came later than the
   * first release): the upgrade test runs it only against releases that have that commit.
   */
  since?: string;
  /** Starts the run this scenario is about; answers its id. */
  start(world: ScenarioWorld, toolsets: Toolsets, options: ScenarioOptions): Promise<string>;
  /** Resolves once the run waits the way the scenario is about; absent: the run just runs. */
  waiting?(world: ScenarioWorld, id: string): Promise<void>;
  /** Ends the wait (approve, signal, renew…); absent: time does it. */
  resolve?(world: ScenarioWorld, id: string, toolsets: Toolsets): Promise<void>;
  expected: Expected;
}

export type Toolsets = Record<"main" | "guarded" | "changing" | "http" | "host" | "children", string>;

/** The guarded server's token; the toolset starts with a stale one, so its call parks. */
export const FRESH_TOKEN = "fresh-token";
export const OLD_TICKET_SCHEMA = { type: "object", properties: { title: { type: "string" } }, required: ["title"] };
const NEW_TICKET_SCHEMA = {
  type: "object",
  properties: { title: { type: "string" }, project: { type: "string" } },
  required: ["title", "project"],
};
export const createTicketTool = (schema: Record<string, unknown>): TestToolDefinition => ({
  ...echoTool("create_ticket"),
  inputSchema: schema,
});

async function ok(answer: Promise<ApiAnswer>, what: string): Promise<ApiAnswer> {
  const got = await answer;
  if (got.status >= 300) throw new Error(`${what} answered ${got.status}: ${JSON.stringify(got.body)}`);
  return got;
}

async function startRun(world: ScenarioWorld, body: Record<string, unknown>, continueAsNew = false): Promise<string> {
  const answer = await ok(world.api("POST", "/v1/runs", body, { continueAsNew }), "starting a run");
  return String(answer.body["id"]);
}

/** Waits as the tests do, with the recorder's longer patience. */
const until = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000) =>
  waitFor(what, probe, { timeoutMs });

interface Entry {
  seq: number;
  tool: string;
  status: string;
  result?: unknown;
}

async function journal(world: ScenarioWorld, id: string): Promise<Entry[]> {
  const answer = await world.api("GET", `/v1/runs/${id}/journal`);
  return (answer.body["entries"] ?? []) as Entry[];
}

/** Waits until the run is parked with the call `seq` waiting for `reason`. */
function parkedOn(seq: number, reason: string) {
  return async (world: ScenarioWorld, id: string): Promise<void> => {
    await until(`run ${id} to park call ${seq} (${reason})`, async () => {
      const { body } = await world.api("GET", `/v1/runs/${id}`);
      const parked = (body["parked"] ?? []) as { seq: number; reason: string }[];
      return parked.some((p) => p.seq === seq && p.reason === reason) ? true : undefined;
    });
  };
}

/** Waits until the run waits for its script's approval, before its first step. */
async function waitsForScriptApproval(world: ScenarioWorld, id: string): Promise<void> {
  await until(`run ${id} to wait for its script's approval`, async () => {
    const { body } = await world.api("GET", `/v1/runs/${id}`);
    const approval = body["scriptApproval"] as { state?: string } | undefined;
    return body["status"] === "parked" && approval?.state === "waiting" ? true : undefined;
  });
}

/** Waits until the journal has `count` completed entries (the run then sits in a wait after them). */
function completedCalls(count: number) {
  return async (world: ScenarioWorld, id: string): Promise<void> => {
    await until(`run ${id} to finish ${count} calls`, async () =>
      (await journal(world, id)).filter((e) => e.status === "completed" || e.status === "failed").length >= count
        ? true
        : undefined,
    );
  };
}

/** The run's webhook URL for `name`, moved onto the API the world talks to now. */
async function webhookUrl(world: ScenarioWorld, id: string): Promise<string> {
  const entry = await until(`run ${id}'s webhook URL`, async () =>
    (await journal(world, id)).find((e) => e.tool === "rewind.webhook" && e.status === "completed"),
  );
  const url = new URL((entry.result as { url: string }).url);
  return world.apiUrl() + url.pathname + url.search;
}

async function postSignal(world: ScenarioWorld, id: string, body: unknown): Promise<void> {
  const response = await fetch(await webhookUrl(world, id), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status >= 300)
    throw new Error(`posting to run ${id}'s webhook answered ${response.status}: ${await response.text()}`);
}

/**
 * Registers a toolset whose document needs a later release than the first (a policy field it
 * came with), so `prepare` stays valid on every release: the scenarios that use it name that
 * release in `since`, and register it when they start. A document registered again keeps its id.
 */
async function registerToolset(world: ScenarioWorld, document: Record<string, unknown>): Promise<string> {
  return String((await ok(world.api("POST", "/v1/toolsets", document), "registering a toolset")).body["id"]);
}

/** The main server with flaky at most once, its unknown outcome parked for a decision. */
const uncertainToolset = (world: ScenarioWorld): Promise<string> =>
  registerToolset(world, {
    mcpServers: { svc: { url: world.mcp.url } },
    policies: { "svc.flaky": { onInterruption: "at_most_once", onUnknown: "park" } },
  });

/** Billing whose charges a refund reverts, each refund waiting for approval. */
const billingToolset = (world: ScenarioWorld): Promise<string> =>
  registerToolset(world, {
    mcpServers: { billing: { url: world.billing.url } },
    policies: {
      "billing.charge": {
        revert: {
          tool: "billing.refund",
          args: { chargeId: "{{result.id}}", amount: "{{args.amount}}", reason: "rollback" },
        },
      },
      "billing.refund": { approval: true },
    },
  });

/** Its one call's outcome is unknown (the server drops the first attempt): parked until decided. */
const UNCERTAIN = `import { svc, ToolError } from "rewind:tools";
export default async function main() {
  try { return ["ok", await svc.flaky({ amount: 5 })]; }
  catch (e) { return e instanceof ToolError ? [e.code] : ["other", String(e)]; }
}`;

/** Sends an invoice; run with approveScript, it waits before its first step. */
const INVOICE = `import { svc } from "rewind:tools";
export default async function main() {
  const got = (await svc.echo({ message: "invoice" })) as { args: { message: string } };
  return got.args.message;
}`;

/** Scripts return the echoed messages only, so expected values hold for any run id. */
const SEQUENTIAL = `import { svc } from "rewind:tools";
export default async function main(input: { n: number }) {
  const seen: string[] = [];
  for (let i = 0; i < input.n; i++) {
    const got = (await svc.echo({ message: "m" + i })) as { args: { message: string } };
    seen.push(got.args.message);
  }
  return seen.join(",");
}`;

export const SCENARIOS: Scenario[] = [
  {
    name: "mcp-sequential",
    start: (w, t) => startRun(w, { toolset: t.main, script: SEQUENTIAL, input: { n: 6 } }),
    expected: { status: "completed", result: "m0,m1,m2,m3,m4,m5" },
  },
  {
    name: "mcp-parallel",
    start: (w, t) =>
      startRun(w, {
        toolset: t.main,
        script: `import { svc } from "rewind:tools";
export default async function main() {
  const first = (await svc.echo({ message: "first" })) as { args: { message: string } };
  const all = await Promise.all(Array.from({ length: 16 }, (_, i) => svc.echo({ message: "p" + i }))) as { args: { message: string } }[];
  const last = (await svc.echo({ message: "last" })) as { args: { message: string } };
  return [first.args.message, all.map((a) => a.args.message).join(","), last.args.message];
}`,
      }),
    expected: {
      status: "completed",
      result: ["first", Array.from({ length: 16 }, (_, i) => "p" + i).join(","), "last"],
    },
  },
  {
    name: "mcp-retries-and-tool-error",
    start: (w, t) =>
      startRun(w, {
        toolset: t.main,
        script: `import { svc, ToolError } from "rewind:tools";
export default async function main() {
  const retried = await svc.flaky({});
  let code = "none";
  try { await svc.fail({}); } catch (e) { code = e instanceof ToolError ? e.code : "other"; }
  return { retried, code };
}`,
      }),
    expected: { status: "completed", result: { retried: { attempt: 2 }, code: "toolFailed" } },
  },
  {
    name: "at-most-once",
    start: (w, t) =>
      startRun(w, {
        toolset: t.main,
        script: `import { svc } from "rewind:tools";
export default async function main() {
  const effect = (await svc.once({ label: "pay" })) as { effects: number };
  return typeof effect.effects;
}`,
      }),
    expected: { status: "completed", result: "number" },
  },
  {
    name: "approval-approved",
    start: (w, t) =>
      startRun(w, {
        toolset: t.main,
        script: `import { svc } from "rewind:tools";
export default async function main() {
  const got = (await svc.record_effect({ label: "invoice" })) as { effects: number };
  return typeof got.effects;
}`,
      }),
    waiting: parkedOn(1, "approval"),
    resolve: async (w, id) => {
      await ok(w.api("POST", `/v1/runs/${id}/calls/1/approve`), "approving");
    },
    expected: { status: "completed", result: "number" },
  },
  {
    name: "approval-rejected",
    start: (w, t) =>
      startRun(w, {
        toolset: t.main,
        script: `import { svc, ToolError } from "rewind:tools";
export default async function main() {
  try { await svc.record_effect({ label: "refund" }); return "sent"; }
  catch (e) { return e instanceof ToolError ? e.code : "other"; }
}`,
      }),
    waiting: parkedOn(1, "approval"),
    resolve: async (w, id) => {
      await ok(w.api("POST", `/v1/runs/${id}/calls/1/reject`, { reason: "not today" }), "rejecting");
    },
    expected: { status: "completed", result: "rejected" },
  },
  {
    name: "sleep",
    start: (w, t, o) =>
      startRun(w, {
        toolset: t.main,
        script: `import { svc, sleep } from "rewind:tools";
export default async function main(input: { ms: number }) {
  const before = Date.now();
  await svc.echo({ message: "before" });
  await sleep(input.ms);
  const after = (await svc.echo({ message: "after" })) as { args: { message: string } };
  return { slept: Date.now() - before >= input.ms, after: after.args.message };
}`,
        input: { ms: o.waitMs },
      }),
    waiting: completedCalls(1),
    expected: { status: "completed", result: { slept: true, after: "after" } },
  },
  {
    name: "signal-via-webhook",
    start: (w, t, o) =>
      startRun(w, {
        toolset: t.main,
        script: `import { webhook, waitForSignal, ToolError } from "rewind:tools";
export default async function main(input: { ms: number }) {
  await webhook("decision");
  const decision = await waitForSignal<{ go: boolean }>("decision");
  let timedOut = "no";
  try { await waitForSignal("never", { timeout: 50 }); } catch (e) { timedOut = e instanceof ToolError ? e.code : "other"; }
  return { go: decision.go, timedOut, ms: input.ms > 0 };
}`,
        input: { ms: o.waitMs },
      }),
    waiting: completedCalls(1),
    resolve: (w, id) => postSignal(w, id, { go: true }),
    expected: { status: "completed", result: { go: true, timedOut: "timedOut", ms: true } },
  },
  {
    name: "child-run-awaited",
    start: (w, t) =>
      startRun(w, {
        toolset: t.children,
        script: `import { workflows } from "rewind:tools";
export default async function main() {
  const child = await workflows.listener.start({ label: "child" });
  const doubled = await workflows.double.start({ n: 21 });
  return { heard: await child.result(), doubled: await doubled.result() };
}`,
      }),
    waiting: async (w, id) => {
      const entry = await until(`run ${id} to start its child`, async () =>
        (await journal(w, id)).find((e) => e.tool === "rewind.workflows.start" && e.status === "completed"),
      );
      await webhookUrl(w, (entry.result as { runId: string }).runId);
      await completedCalls(2)(w, id);
    },
    resolve: async (w, id) => {
      const entry = (await journal(w, id)).find((e) => e.tool === "rewind.workflows.start");
      await postSignal(w, (entry?.result as { runId: string }).runId, "hello");
    },
    expected: { status: "completed", result: { heard: { label: "child", heard: "hello" }, doubled: 42 } },
  },
  {
    name: "child-run-cancelled",
    start: (w, t) =>
      startRun(w, {
        toolset: t.children,
        script: `import { workflows, ToolError } from "rewind:tools";
export default async function main() {
  const child = await workflows.listener.start({ label: "doomed" });
  try { return { heard: await child.result() }; }
  catch (e) { return e instanceof ToolError ? { code: e.code, status: (e.details as { status?: string }).status } : { other: String(e) }; }
}`,
      }),
    waiting: async (w, id) => {
      await until(`run ${id} to await its child`, async () => {
        const entries = await journal(w, id);
        return entries.some((e) => e.tool === "rewind.workflows.start" && e.status === "completed") &&
          entries.some((e) => e.tool === "rewind.workflows.result")
          ? true
          : undefined;
      });
    },
    resolve: async (w, id) => {
      const entry = (await journal(w, id)).find((e) => e.tool === "rewind.workflows.start");
      await ok(w.api("POST", `/v1/runs/${(entry?.result as { runId: string }).runId}/cancel`), "cancelling the child");
    },
    expected: { status: "completed", result: { code: "childFailed", status: "cancelled" } },
  },
  {
    name: "large-result",
    start: (w, t) =>
      startRun(w, {
        toolset: t.main,
        script: `import { svc } from "rewind:tools";
export default async function main() {
  const got = (await svc.echo({ message: "x".repeat(300_000) })) as { args: { message: string } };
  return got.args.message.length;
}`,
      }),
    expected: { status: "completed", result: 300_000 },
  },
  {
    name: "credentials-renewed",
    start: (w, t) =>
      startRun(w, {
        toolset: t.guarded,
        script:
          'import { guarded } from "rewind:tools";\nexport default async () => { await guarded.whoami({}); return "done"; };',
      }),
    waiting: parkedOn(1, "credentialsExpired"),
    resolve: async (w, _id, t) => {
      await ok(
        w.api("PUT", `/v1/toolsets/${t.guarded}/credentials`, {
          mcpServers: { guarded: { headers: { authorization: `Bearer ${FRESH_TOKEN}` } } },
        }),
        "renewing credentials",
      );
    },
    expected: { status: "completed", result: "done" },
  },
  {
    name: "run-credentials-renewed",
    since: "bec290f",
    start: (w, t) =>
      startRun(w, {
        toolset: t.guarded,
        credentials: { mcpServers: { guarded: { headers: { authorization: "Bearer stale-run-token" } } } },
        script:
          'import { guarded } from "rewind:tools";\nexport default async () => { await guarded.whoami({}); return "renewed"; };',
      }),
    waiting: parkedOn(1, "credentialsExpired"),
    resolve: async (w, id) => {
      await ok(
        w.api("PUT", `/v1/runs/${id}/credentials`, {
          mcpServers: { guarded: { headers: { authorization: `Bearer ${FRESH_TOKEN}` } } },
        }),
        "renewing the run's credentials",
      );
    },
    expected: { status: "completed", result: "renewed" },
  },
  {
    name: "schema-changed-approved",
    start: (w, t) =>
      startRun(w, {
        toolset: t.changing,
        script: `import { tickets, sleep } from "rewind:tools";
export default async function main(input: { ms: number }) {
  await tickets.create_ticket({ title: "first" });
  await sleep(input.ms);
  const second = (await tickets.create_ticket({ title: "second" })) as { args: { title: string } };
  return second.args.title;
}`,
        input: { ms: 3000 },
      }),
    waiting: async (w, id) => {
      await completedCalls(1)(w, id);
      w.changing.setTools([createTicketTool(NEW_TICKET_SCHEMA)]);
      await parkedOn(3, "schemaChanged")(w, id);
    },
    resolve: async (w, id) => {
      await ok(w.api("POST", `/v1/runs/${id}/calls/3/approve`), "approving the changed schema");
    },
    expected: { status: "completed", result: "second" },
  },
  {
    name: "http-fetch",
    start: (w, t) =>
      startRun(w, {
        toolset: t.http,
        script: `export default async function main(input: { host: string }) {
  const got = await fetch("http://" + input.host + "/hello");
  const posted = await fetch("http://" + input.host + "/things", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ a: 1 }) });
  return { status: got.status, got: await got.json(), posted: await posted.json() };
}`,
        input: { host: w.httpHost },
      }),
    expected: {
      status: "completed",
      result: { status: 200, got: { hello: "world", method: "GET" }, posted: { hello: "world", method: "POST" } },
    },
  },
  {
    name: "host-tools",
    start: (w, t) =>
      startRun(w, {
        toolset: t.host,
        script: `import { harness } from "rewind:tools";
export default async function main() {
  const answer = (await harness.ask({ question: "ok?" })) as { yes: boolean };
  const flaky = (await harness.flaky({})) as { attempt: number };
  return { yes: answer.yes, attempt: flaky.attempt };
}`,
      }),
    expected: { status: "completed", result: { yes: true, attempt: 2 } },
  },
  {
    name: "continue-as-new",
    start: (w, t, o) =>
      startRun(
        w,
        {
          toolset: t.main,
          script: `import { svc, sleep } from "rewind:tools";
export default async function main(input: { ms: number }) {
  let total = 0;
  for (let i = 0; i < 24; i++) {
    await svc.echo({ message: String(i) });
    total += i;
    if (i === 20) await sleep(input.ms);
  }
  const all = await Promise.all([svc.echo({ message: "a" }), svc.echo({ message: "b" })]);
  return { total, parallel: all.length };
}`,
          input: { ms: o.waitMs },
        },
        true,
      ),
    waiting: completedCalls(21),
    expected: { status: "completed", result: { total: 276, parallel: 2 } },
  },
  {
    name: "script-throws",
    start: (w) => startRun(w, { script: 'export default async () => { throw new Error("bad input"); };' }),
    expected: { status: "failed", error: "bad input" },
  },
  {
    name: "uncaught-tool-error",
    start: (w, t) =>
      startRun(w, {
        toolset: t.main,
        script: 'import { svc } from "rewind:tools";\nexport default async () => { await svc.fail({}); return 1; };',
      }),
    expected: { status: "failed", error: "toolFailed" },
  },
  {
    name: "cpu-limit",
    start: (w) => startRun(w, { script: "export default async () => { for (;;) {} };" }),
    expected: { status: "failed", error: "CPU" },
  },
  {
    // 32 MB at a time: a few steps reach the heap limit. With 8 MB at a time, V8's garbage
    // collections near the limit once spent the step's 2 s of CPU first on a loaded machine.
    name: "memory-limit",
    start: (w) =>
      startRun(w, {
        script:
          'export default async function main() {\n  const hoard: string[][] = [];\n  for (;;) hoard.push(new Array(4_000_000).fill("x"));\n}',
      }),
    expected: { status: "failed", error: "memory limit" },
  },
  {
    name: "stuck",
    start: (w) => startRun(w, { script: "export default async () => { await new Promise(() => {}); return 1; };" }),
    expected: { status: "failed", error: "nothing will settle" },
  },
  {
    name: "outcome-unknown-resolved",
    since: "9dae151",
    start: async (w) => startRun(w, { toolset: await uncertainToolset(w), script: UNCERTAIN }),
    waiting: parkedOn(1, "outcomeUnknown"),
    resolve: async (w, id) => {
      await ok(
        w.api("POST", `/v1/runs/${id}/calls/1/resolve`, { result: { charged: true }, by: "ops" }),
        "resolving the unknown outcome",
      );
    },
    expected: { status: "completed", result: ["ok", { charged: true }] },
  },
  {
    name: "outcome-unknown-retried",
    since: "9dae151",
    start: async (w) => startRun(w, { toolset: await uncertainToolset(w), script: UNCERTAIN }),
    waiting: parkedOn(1, "outcomeUnknown"),
    resolve: async (w, id) => {
      await ok(w.api("POST", `/v1/runs/${id}/calls/1/retry`, { by: "ops" }), "retrying the unknown outcome");
    },
    expected: { status: "completed", result: ["ok", { attempt: 2 }] },
  },
  {
    name: "outcome-unknown-failed",
    since: "9dae151",
    start: async (w) => startRun(w, { toolset: await uncertainToolset(w), script: UNCERTAIN }),
    waiting: parkedOn(1, "outcomeUnknown"),
    resolve: async (w, id) => {
      await ok(
        w.api("POST", `/v1/runs/${id}/calls/1/fail`, { reason: "the ledger has no charge" }),
        "failing the unknown outcome",
      );
    },
    expected: { status: "completed", result: ["outcomeUnknown"] },
  },
  {
    name: "script-approval-approved",
    since: "9dae151",
    start: (w, t) => startRun(w, { toolset: t.main, script: INVOICE, approveScript: true }),
    waiting: waitsForScriptApproval,
    resolve: async (w, id) => {
      await ok(w.api("POST", `/v1/runs/${id}/approve`, { by: "reviewer" }), "approving the script");
    },
    expected: { status: "completed", result: "invoice" },
  },
  {
    name: "script-approval-rejected",
    since: "9dae151",
    start: (w, t) => startRun(w, { toolset: t.main, script: INVOICE, approveScript: true }),
    waiting: waitsForScriptApproval,
    resolve: async (w, id) => {
      await ok(
        w.api("POST", `/v1/runs/${id}/reject`, { reason: "sends invoices", by: "reviewer" }),
        "rejecting the script",
      );
    },
    expected: { status: "failed", error: "the harness rejected the script: sends invoices" },
  },
  {
    name: "rollback-revert-approved",
    since: "e653b8e",
    start: async (w) =>
      startRun(w, {
        toolset: await billingToolset(w),
        script: `import { billing, waitForSignal } from "rewind:tools";
export default async function main() {
  await billing.charge({ customer: "alice", amount: 10 });
  await waitForSignal("never");
  return "done";
}`,
      }),
    // Rolled back while it waits for its signal: the refund reverting its charge waits for approval.
    waiting: async (w, id) => {
      await until(`run ${id} to wait for its signal`, async () =>
        (await journal(w, id)).some((e) => e.tool === "rewind.waitForSignal") ? true : undefined,
      );
      await ok(
        w.api("POST", `/v1/runs/${id}/rollback`, { by: "ops", reason: "order cancelled" }),
        "asking for a rollback",
      );
      await parkedOn(3, "approval")(w, id);
    },
    resolve: async (w, id) => {
      await ok(w.api("POST", `/v1/runs/${id}/calls/3/approve`, { by: "finance" }), "approving the refund");
    },
    expected: { status: "rolledBack" },
  },
  {
    name: "cancelled-while-parked",
    start: (w, t) =>
      startRun(w, {
        toolset: t.main,
        script:
          'import { svc } from "rewind:tools";\nexport default async () => { await svc.record_effect({ label: "x" }); return 1; };',
      }),
    waiting: parkedOn(1, "approval"),
    resolve: async (w, id) => {
      await ok(w.api("POST", `/v1/runs/${id}/cancel`), "cancelling");
    },
    expected: { status: "cancelled" },
  },
];

/** A fork of a failed run, made once its parent has ended; recorded like any other run. */
export async function startFork(world: ScenarioWorld, toolsets: Toolsets): Promise<{ parent: string; fork: string }> {
  const parent = await startForkParent(world, toolsets);
  return { parent, fork: await forkRun(world, parent) };
}

/** Starts the run a fork is made of (it fails at its second call) and waits until it failed. */
export async function startForkParent(world: ScenarioWorld, toolsets: Toolsets): Promise<string> {
  const parent = await startRun(world, {
    toolset: toolsets.main,
    script:
      'import { svc } from "rewind:tools";\nexport default async () => { await svc.echo({ message: "a" }); await svc.fail({}); return 1; };',
  });
  await until(`fork parent ${parent} to fail`, async () => {
    const { body } = await world.api("GET", `/v1/runs/${parent}`);
    return body["status"] === "failed" ? true : undefined;
  });
  return parent;
}

/** Forks the failed `parent` with a fixed script (which returns 2); answers the fork's id. */
export async function forkRun(world: ScenarioWorld, parent: string): Promise<string> {
  const forked = await ok(
    world.api("POST", `/v1/runs/${parent}/fork`, {
      script:
        'import { svc } from "rewind:tools";\nexport default async () => { await svc.echo({ message: "a" }); await svc.echo({ message: "fixed" }); return 2; };',
    }),
    "forking",
  );
  return String(forked.body["id"]);
}

export { until, ok, startRun };
