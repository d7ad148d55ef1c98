/**
 * A run parked on stored credentials is woken by the next write to them whenever the write lands:
 * while the refused call is still in flight (before the run is parked, so no listing of parked
 * runs can find it), or through the credentials workflow alone, without the API's listing. A
 * renewal the refused call already saw does not send it again, and a run told of one write twice
 * sends its call once. An end user's run waits for that end user's write; a derived toolset's run
 * for its base's too. The toolset's credentials workflow orders writes and waits, so no wake-up
 * falls between them.
 */
import { randomUUID } from "node:crypto";
import type { WorkflowHandle } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSecretBox } from "../../src/credentials/index.ts";
import { credentialsWorkflowId } from "../../src/shared/index.ts";
import { credentialsRenewedSignal, setCredentialsUpdate } from "../../src/workflows/messages.ts";
import { startMcpServer, type RequestInfo, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { IDEMPOTENCY_KEY, echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, TEST_SECRET_KEY, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

const key = `waits-key-${randomUUID()}`;
const namespace = `waits-${randomUUID().slice(0, 8)}`;
const auth = { authorization: `Bearer ${key}` };
const GOOD = "Bearer alpha-good";
const STALE = "Bearer alpha-stale";
let stack: RewindStack;
let server: TestMcpServer;
/** While set, a request carrying the stale token waits here until the test lets it go. */
let gate: { arrived: () => void; release: Promise<void> } | undefined;
/** Requests the server refused, by the token they carried. */
const refused = new Map<string, number>();

const request = (method: string, route: string, body?: unknown) => stack.request(method, route, body, auth);
const bearer = (group: string, token: string) => ({ [group]: { headers: { authorization: token } } });
const box = createSecretBox(TEST_SECRET_KEY);

beforeAll(async () => {
  stack = await startRewindStack({ env: { REWIND_API_KEYS: `${key}:${namespace}` } });
  server = await startMcpServer({
    tools: [echoTool("whoami")],
    requiredAuthorization: GOOD,
    onRequest: (info: RequestInfo) => {
      const token = info.headers["authorization"] ?? "";
      if (token !== GOOD) refused.set(token, (refused.get(token) ?? 0) + 1);
    },
    hold: (info: RequestInfo) => {
      if (!gate || info.headers["authorization"] !== STALE) return undefined;
      gate.arrived();
      return gate.release;
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

/** A test's toolset: the one server under its own group name (its own content-addressed id). */
interface Toolset {
  id: string;
  group: string;
}

/** Registers the server as `group` (with the good token, which its listing needs), then leaves it `token`. */
async function toolsetWith(group: string, token: string): Promise<Toolset> {
  const registered = await request("POST", "/v1/toolsets", {
    mcpServers: { [group]: { url: server.url } },
    credentials: { mcpServers: bearer(group, GOOD) },
  });
  expect([200, 201], JSON.stringify(registered.body)).toContain(registered.status);
  const toolset = { id: String(registered.body.id), group };
  expect((await writeThroughApi(toolset, token)).resumedRuns).toBe(0);
  return toolset;
}

async function writeThroughApi(toolset: Toolset, token: string): Promise<{ resumedRuns: number }> {
  const written = await request("PUT", `/v1/toolsets/${toolset.id}/credentials`, {
    mcpServers: bearer(toolset.group, token),
  });
  expect(written.status, JSON.stringify(written.body)).toBe(200);
  return written.body as { resumedRuns: number };
}

const credentialsOf = (toolset: Toolset) =>
  stack.client.workflow.getHandle(credentialsWorkflowId(namespace, toolset.id));

/**
 * Writes straight to the credentials workflow (the end user's, given one), as the API does but
 * without its listing of parked runs.
 */
async function writeDirectly(
  toolset: Toolset,
  token: string,
  endUser?: string,
): Promise<{ revision: number; woken?: string[] }> {
  const sealed = box.seal(JSON.stringify({ mcpServers: bearer(toolset.group, token) }));
  return credentialsOf(toolset).executeUpdate(setCredentialsUpdate, {
    args: [{ sealed, ...(endUser === undefined ? {} : { endUser }) }],
  });
}

/** Starts a run of the toolset's `whoami` (of the derived toolset `runToolset`, if given). */
async function start(toolset: Toolset, options: { endUser?: string; runToolset?: string } = {}): Promise<string> {
  const script = `import { ${toolset.group} } from "rewind:tools";
export default async () => { await ${toolset.group}.whoami({}); return "done"; };`;
  const started = await request("POST", "/v1/runs", {
    toolset: options.runToolset ?? toolset.id,
    script,
    ...(options.endUser === undefined ? {} : { endUser: options.endUser }),
  });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return String(started.body.id);
}

async function waitParked(id: string): Promise<void> {
  await waitFor(`run ${id} to park`, async () => (await request("GET", `/v1/runs/${id}`)).body, {
    timeoutMs: 20_000,
    until: (view) => view["status"] === "parked",
  });
}

/** The signals a workflow's history holds, by name, each with whether a workflow task completed after it. */
async function signalsIn(handle: WorkflowHandle): Promise<{ name: string; handled: boolean }[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events.flatMap((event, index) => {
    const signalled = event.workflowExecutionSignaledEventAttributes;
    if (!signalled) return [];
    const handled = events.slice(index + 1).some((later) => later.workflowTaskCompletedEventAttributes);
    return [{ name: signalled.signalName ?? "", handled }];
  });
}

/** What the server saw of the run's call: its key and the token each time. */
const seenBy = (id: string) =>
  server.calls
    .filter((c) => String(c.meta[IDEMPOTENCY_KEY]).startsWith(`${id}/`))
    .map((c) => ({ key: c.meta[IDEMPOTENCY_KEY], authorization: c.headers["authorization"] }));

describe("a run parked on stored credentials", () => {
  it("wakes on a write made while its refused call was still in flight, before any listing could find it", async () => {
    const toolset = await toolsetWith("inflight", STALE);
    let arrived!: () => void;
    const held = new Promise<void>((resolve) => (arrived = resolve));
    let release!: () => void;
    gate = { arrived, release: new Promise<void>((resolve) => (release = resolve)) };
    try {
      const id = await start(toolset);
      await held;
      // The run is not parked yet: the write's listing finds nothing to wake.
      expect(await writeThroughApi(toolset, GOOD)).toEqual({ resumedRuns: 0 });
      release();
      const done = await waitForRun(stack, id, 30_000, auth);
      expect(done.status, JSON.stringify(done)).toBe("completed");
      // Refused with the stale token, then sent with the good one, under the same key.
      expect(refused.get(STALE)).toBeGreaterThan(0);
      expect(seenBy(id)).toEqual([{ key: `${id}/1`, authorization: GOOD }]);
    } finally {
      gate = undefined;
    }
  });

  it("is woken by the credentials workflow itself, which names it in the write's answer", async () => {
    const toolset = await toolsetWith("direct", STALE);
    const id = await start(toolset);
    await waitParked(id);
    await waitFor("the run to tell the credentials workflow it waits", () => signalsIn(credentialsOf(toolset)), {
      until: (signals) => signals.some((s) => s.name === "awaitCredentials" && s.handled),
    });
    const written = await writeDirectly(toolset, GOOD);
    expect(written.woken).toEqual([id]);
    expect((await waitForRun(stack, id, 30_000, auth)).status).toBe("completed");
    expect(seenBy(id)).toEqual([{ key: `${id}/1`, authorization: GOOD }]);
  });

  it("is not sent again by a renewal its call was already refused with", async () => {
    const toolset = await toolsetWith("twice", STALE);
    const id = await start(toolset);
    await waitParked(id);
    const run = stack.client.workflow.getHandle(id);
    const revisionNow = async () =>
      ((await credentialsOf(toolset).query("getCredentials")) as { revision: number }).revision;
    const awaitsTold = async () =>
      (await signalsIn(credentialsOf(toolset))).filter((s) => s.name === "awaitCredentials" && s.handled).length;
    /** Tells the run of a write it has seen, as a late or second signal would, and waits until it handled it. */
    const renewAgain = async (revision: number) => {
      const handledBefore = (await signalsIn(run)).filter((s) => s.name === "credentialsRenewed" && s.handled).length;
      await run.signal(credentialsRenewedSignal, { scope: "toolset", revision });
      await waitFor("the run to handle the renewal", () => signalsIn(run), {
        until: (signals) => signals.filter((s) => s.name === "credentialsRenewed" && s.handled).length > handledBefore,
      });
    };

    // The write it was refused with is no news to it.
    const refusedStale = refused.get(STALE) ?? 0;
    await renewAgain(await revisionNow());
    expect((await request("GET", `/v1/runs/${id}`)).body["status"]).toBe("parked");

    // A newer write that is refused too: the call is sent once with it, and parks again.
    const STILL_STALE = "Bearer alpha-still-stale";
    expect((await writeThroughApi(toolset, STILL_STALE)).resumedRuns).toBe(1);
    await waitFor("the call to park again", awaitsTold, { until: (told) => told >= 2 });
    const refusedStill = refused.get(STILL_STALE) ?? 0;
    expect(refusedStill).toBeGreaterThan(0);
    await renewAgain(await revisionNow());
    expect((await request("GET", `/v1/runs/${id}`)).body["status"]).toBe("parked");
    expect(refused.get(STILL_STALE)).toBe(refusedStill);
    expect(refused.get(STALE)).toBe(refusedStale);

    expect((await writeThroughApi(toolset, GOOD)).resumedRuns).toBe(1);
    expect((await waitForRun(stack, id, 30_000, auth)).status).toBe("completed");
    expect(seenBy(id)).toEqual([{ key: `${id}/1`, authorization: GOOD }]);
  });

  it("on an end user's credentials is woken by that end user's write, not another's", async () => {
    const toolset = await toolsetWith("person", GOOD);
    expect(
      (
        await request("PUT", `/v1/end-users/dana/toolsets/${toolset.id}/credentials`, {
          mcpServers: bearer(toolset.group, STALE),
        })
      ).status,
    ).toBe(200);
    const id = await start(toolset, { endUser: "dana" });
    await waitParked(id);
    await waitFor("the run to tell the credentials workflow it waits", () => signalsIn(credentialsOf(toolset)), {
      until: (signals) => signals.some((s) => s.name === "awaitCredentials" && s.handled),
    });
    expect((await writeDirectly(toolset, GOOD, "erin")).woken).toBeUndefined();
    expect((await writeDirectly(toolset, GOOD)).woken).toBeUndefined();
    expect((await request("GET", `/v1/runs/${id}`)).body["status"]).toBe("parked");
    expect((await writeDirectly(toolset, GOOD, "dana")).woken).toEqual([id]);
    expect((await waitForRun(stack, id, 30_000, auth)).status).toBe("completed");
    expect(seenBy(id)).toEqual([{ key: `${id}/1`, authorization: GOOD }]);
  });

  it("of a derived toolset is woken by a write to its base's credentials", async () => {
    const base = await toolsetWith("based", STALE);
    const derived = await request("POST", "/v1/toolsets", { base: base.id, workflows: {} });
    expect([200, 201], JSON.stringify(derived.body)).toContain(derived.status);
    const id = await start(base, { runToolset: String(derived.body.id) });
    await waitParked(id);
    await waitFor("the run to tell its base's credentials workflow it waits", () => signalsIn(credentialsOf(base)), {
      until: (signals) => signals.some((s) => s.name === "awaitCredentials" && s.handled),
    });
    expect((await writeDirectly(base, GOOD)).woken).toEqual([id]);
    expect((await waitForRun(stack, id, 30_000, auth)).status).toBe("completed");
    expect(seenBy(id)).toEqual([{ key: `${id}/1`, authorization: GOOD }]);
  });
});
