/**
 * Rolling a run back, against a real Temporal server and a billing MCP server whose effects can
 * be undone: completed calls are reverted newest first, each by a journaled call with its own
 * key, and the service's effects are undone; a failed script under `onFailure: "rollback"` rolls
 * back instead of failing; reverts obey their tools' approval and at-most-once policies; a
 * template path missing from a result, and a revert that fails, are recorded as not reverted;
 * only an open run can be rolled back.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { allRefunded, billingTools, type BillingState } from "../helpers/billing-tools.ts";
import { startMcpServer, type TestMcpServer, type TestToolDefinition } from "../helpers/mcp-test-server.ts";
import { startRewindStack, waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
const servers: TestMcpServer[] = [];

beforeAll(async () => {
  stack = await startRewindStack();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});
afterAll(async () => {
  await stack?.stop();
});

const REFUND = { chargeId: "{{result.id}}", amount: "{{args.amount}}", reason: "rollback" };
const CHARGE_REVERT = { revert: { tool: "billing.refund", args: REFUND } };

/** A billing server (optionally with tools replaced) and a toolset of it with these policies. */
async function billingToolset(
  policies: Record<string, unknown>,
  replace: (tools: TestToolDefinition[]) => TestToolDefinition[] = (tools) => tools,
): Promise<{ toolset: string; state: BillingState; server: TestMcpServer }> {
  const { tools, state } = billingTools();
  const server = await startMcpServer({ tools: replace(tools) });
  servers.push(server);
  const toolset = await registerToolset(stack, { mcpServers: { billing: { url: server.url } }, policies });
  return { toolset, state, server };
}

/** Charges alice 10 and bob 20, holds an account, then waits for a signal that never comes. */
const CHARGES_THEN_WAIT = `import { billing, waitForSignal } from "rewind:tools";
export default async function main() {
  await billing.charge({ customer: "alice", amount: 10 });
  await billing.charge({ customer: "bob", amount: 20 });
  await billing.hold({ account: "acct-1" });
  await waitForSignal("never");
  return "done";
}`;

const journalOf = async (id: string) =>
  (await stack.request("GET", `/v1/runs/${id}/journal`)).body["entries"] as {
    seq: number;
    tool: string;
    args: unknown;
    status: string;
    revertOf?: number;
    rollback?: { outcome: string; revertSeq?: number; reason?: string };
    error?: { code: string; message: string };
  }[];

/** Waits until the run's journal has `count` entries and the last one runs. */
const waitForCalls = (id: string, count: number) =>
  waitFor(`run ${id} to issue ${count} calls`, () => journalOf(id), {
    timeoutMs: 20_000,
    until: (entries) => entries.length === count && entries.at(-1)?.status === "running",
  });

const waitParked = (id: string) =>
  waitFor(`run ${id} to park`, async () => (await stack.request("GET", `/v1/runs/${id}`)).body, {
    timeoutMs: 20_000,
    until: (body) => body.status === "parked",
  });

const rollbackOf = (body: ApiBody) => body["rollback"] as Record<string, unknown>;

describe("rollback through the API", () => {
  it("reverts completed calls newest first, each with its own key, and undoes their effects", async () => {
    const { toolset, state } = await billingToolset({
      "billing.charge": CHARGE_REVERT,
      "billing.hold": { revert: { tool: "billing.release", args: { holdId: "{{result.holdId}}" } } },
    });
    const id = await startRun(stack, { toolset, script: CHARGES_THEN_WAIT });
    await waitForCalls(id, 4);
    const asked = await stack.request("POST", `/v1/runs/${id}/rollback`, { by: "ops", reason: "order cancelled" });
    expect(asked.status).toBe(202);
    expect(["rollingBack", "rolledBack"]).toContain(rollbackOf(asked.body)["state"]);

    const done = await waitForRun(stack, id);
    expect(done.status).toBe("rolledBack");
    expect(done.result).toBeUndefined();
    const rollback = rollbackOf(done);
    expect(rollback).toMatchObject({
      state: "rolledBack",
      trigger: { kind: "requested", principal: "default/loopback", by: "ops", reason: "order cancelled" },
      reverted: [
        { seq: 3, tool: "billing.hold", revertSeq: 5, revertTool: "billing.release" },
        { seq: 2, tool: "billing.charge", revertSeq: 6, revertTool: "billing.refund" },
        { seq: 1, tool: "billing.charge", revertSeq: 7, revertTool: "billing.refund" },
      ],
      notReverted: [],
      unfinished: [{ seq: 4, tool: "rewind.waitForSignal", status: "running" }],
    });

    expect(state.effects.map(({ tool, key, args }) => [tool, key, args])).toEqual([
      ["charge", `${id}/1`, { customer: "alice", amount: 10 }],
      ["charge", `${id}/2`, { customer: "bob", amount: 20 }],
      ["hold", `${id}/3`, { account: "acct-1" }],
      ["release", `${id}/5`, { holdId: "hold_acct-1" }],
      ["refund", `${id}/6`, { chargeId: "ch_2", amount: 20, reason: "rollback" }],
      ["refund", `${id}/7`, { chargeId: "ch_1", amount: 10, reason: "rollback" }],
    ]);
    expect(allRefunded(state)).toBe(true);

    const entries = await journalOf(id);
    expect(entries.map((e) => [e.seq, e.tool, e.status, e.revertOf ?? null, e.rollback ?? null])).toEqual([
      [1, "billing.charge", "completed", null, { outcome: "reverted", revertSeq: 7 }],
      [2, "billing.charge", "completed", null, { outcome: "reverted", revertSeq: 6 }],
      [3, "billing.hold", "completed", null, { outcome: "reverted", revertSeq: 5 }],
      [4, "rewind.waitForSignal", "running", null, null],
      [5, "billing.release", "completed", 3, null],
      [6, "billing.refund", "completed", 2, null],
      [7, "billing.refund", "completed", 1, null],
    ]);

    const again = await stack.request("POST", `/v1/runs/${id}/rollback`, {});
    expect(again.status).toBe(409);
    expect(again.body.error?.code).toBe("conflict");

    const listed = await waitFor(
      "the rolled-back run in the list",
      async () => (await stack.request("GET", `/v1/runs?status=rolledBack&toolset=${toolset}`)).body.runs ?? [],
      { timeoutMs: 20_000, until: (runs) => runs.some((run) => run.id === id) },
    );
    expect(listed.find((run) => run.id === id)?.status).toBe("rolledBack");
    const completed = (await stack.request("GET", `/v1/runs?status=completed&toolset=${toolset}`)).body.runs ?? [];
    expect(completed.map((run) => run.id)).not.toContain(id);
  });

  it("withdraws a parked call it never sent, and parks a revert that needs approval until approved", async () => {
    const { toolset, state } = await billingToolset({
      "billing.charge": CHARGE_REVERT,
      "billing.hold": { approval: true },
      "billing.refund": { approval: true },
    });
    const id = await startRun(stack, {
      toolset,
      script: `import { billing } from "rewind:tools";
export default async function main() {
  await billing.charge({ customer: "carol", amount: 5 });
  await billing.hold({ account: "acct-2" });
  return "held";
}`,
    });
    const parked = await waitParked(id);
    expect(parked["parked"]).toMatchObject([{ seq: 2, tool: "billing.hold", reason: "approval" }]);
    expect((await stack.request("POST", `/v1/runs/${id}/rollback`)).status).toBe(202);

    const waiting = await waitFor(
      `the revert of run ${id} to park`,
      async () => (await stack.request("GET", `/v1/runs/${id}`)).body,
      {
        timeoutMs: 20_000,
        until: (body) => (body["parked"] as { seq: number }[] | undefined)?.some((p) => p.seq === 3) === true,
      },
    );
    expect(waiting.status).toBe("parked");
    expect(waiting["parked"]).toMatchObject([
      { seq: 3, tool: "billing.refund", args: { chargeId: "ch_1", amount: 5, reason: "rollback" }, reason: "approval" },
    ]);
    expect(rollbackOf(waiting)["state"]).toBe("rollingBack");
    expect(state.calls.get("refund") ?? 0).toBe(0);

    expect((await stack.request("POST", `/v1/runs/${id}/calls/3/approve`, { by: "finance" })).status).toBe(200);
    const done = await waitForRun(stack, id);
    expect(done.status).toBe("rolledBack");
    expect(rollbackOf(done)).toMatchObject({
      reverted: [{ seq: 1, revertSeq: 3 }],
      notReverted: [],
      unfinished: [],
    });
    expect(state.calls.get("hold") ?? 0).toBe(0);
    expect(state.effects.map((e) => [e.tool, e.key])).toEqual([
      ["charge", `${id}/1`],
      ["refund", `${id}/3`],
    ]);
    const entries = await journalOf(id);
    expect(entries[1]).toMatchObject({ seq: 2, status: "failed", error: { code: "rejected" } });
    expect(entries[1]?.error?.message).toContain("the run is rolling back");
    expect(entries[2]).toMatchObject({ seq: 3, revertOf: 1, status: "completed", decidedBy: { by: "finance" } });
  });

  it("sends an at-most-once revert once, and records an interrupted one as not reverted", async () => {
    let refundAttempts = 0;
    const { toolset, state } = await billingToolset(
      { "billing.charge": CHARGE_REVERT, "billing.refund": { onInterruption: "at_most_once" } },
      (tools) =>
        tools.map((tool) =>
          tool.name !== "refund"
            ? tool
            : {
                ...tool,
                async handler(_args, { dropConnection, signal }) {
                  refundAttempts += 1;
                  dropConnection();
                  return new Promise((resolve) =>
                    signal.addEventListener("abort", () => resolve({ content: [] }), { once: true }),
                  );
                },
              },
        ),
    );
    const id = await startRun(stack, {
      toolset,
      script: CHARGES_THEN_WAIT.replace(
        'billing.hold({ account: "acct-1" })',
        'billing.charge({ customer: "carol", amount: 30 })',
      ),
    });
    await waitForCalls(id, 4);
    expect((await stack.request("POST", `/v1/runs/${id}/rollback`)).status).toBe(202);
    const done = await waitForRun(stack, id, 60_000);
    expect(done.status).toBe("rolledBack");
    const rollback = rollbackOf(done);
    expect(rollback["reverted"]).toEqual([]);
    const notReverted = rollback["notReverted"] as { seq: number; revertSeq: number; reason: string }[];
    expect(notReverted.map((n) => [n.seq, n.revertSeq])).toEqual([
      [3, 5],
      [2, 6],
      [1, 7],
    ]);
    for (const entry of notReverted) expect(entry.reason).toMatch(/^outcomeUnknown: /);
    // One attempt per revert, never a second: the policy holds for reverts too.
    expect(refundAttempts).toBe(3);
    expect(allRefunded(state)).toBe(false);
  });

  it("records a revert whose template path is missing from the result as not reverted, and sends nothing for it", async () => {
    const { toolset, state } = await billingToolset({
      "billing.charge": CHARGE_REVERT,
      "billing.hold": { revert: { tool: "billing.release", args: { holdId: "{{result.hold.id}}" } } },
    });
    const id = await startRun(stack, { toolset, script: CHARGES_THEN_WAIT });
    await waitForCalls(id, 4);
    expect((await stack.request("POST", `/v1/runs/${id}/rollback`)).status).toBe(202);
    const done = await waitForRun(stack, id);
    expect(rollbackOf(done)).toMatchObject({
      reverted: [
        { seq: 2, revertSeq: 5 },
        { seq: 1, revertSeq: 6 },
      ],
      notReverted: [
        {
          seq: 3,
          tool: "billing.hold",
          revertTool: "billing.release",
          reason: `the revert's arguments could not be built: {{result.hold.id}}: result has no "hold"`,
        },
      ],
    });
    expect(state.calls.get("release") ?? 0).toBe(0);
    expect(allRefunded(state)).toBe(true);
    const entries = await journalOf(id);
    expect(entries[2]?.rollback).toEqual({
      outcome: "notReverted",
      reason: `the revert's arguments could not be built: {{result.hold.id}}: result has no "hold"`,
    });
  });
});

describe("onFailure: rollback", () => {
  const FAILS_AFTER_CHARGES = `import { billing } from "rewind:tools";
export default async function main() {
  await billing.charge({ customer: "dave", amount: 7 });
  await billing.charge({ customer: "erin", amount: 8 });
  throw new Error("the shipment could not be booked");
}`;

  it("rolls the run back when its script fails, instead of failing it", async () => {
    const { toolset, state } = await billingToolset({ "billing.charge": CHARGE_REVERT });
    const { status, body } = await stack.request("POST", "/v1/runs", {
      toolset,
      script: FAILS_AFTER_CHARGES,
      onFailure: "rollback",
    });
    expect(status).toBe(201);
    const id = String(body.id);
    const done = await waitForRun(stack, id);
    expect(done.status).toBe("rolledBack");
    expect(done.error).toBeUndefined();
    expect(rollbackOf(done)).toMatchObject({
      trigger: { kind: "scriptFailed", error: { type: "ScriptFailed" } },
      reverted: [
        { seq: 2, revertSeq: 3 },
        { seq: 1, revertSeq: 4 },
      ],
    });
    expect((rollbackOf(done)["trigger"] as { error: { message: string } }).error.message).toContain(
      "the shipment could not be booked",
    );
    expect(allRefunded(state)).toBe(true);
    expect((await stack.request("POST", `/v1/runs/${id}/rollback`)).status).toBe(409);
  });

  it("fails the run and reverts nothing without it", async () => {
    const { toolset, state } = await billingToolset({ "billing.charge": CHARGE_REVERT });
    const id = await startRun(stack, { toolset, script: FAILS_AFTER_CHARGES });
    const done = await waitForRun(stack, id);
    expect(done.status).toBe("failed");
    expect(done["rollback"]).toBeUndefined();
    expect(state.calls.get("refund") ?? 0).toBe(0);
    expect((await stack.request("POST", `/v1/runs/${id}/rollback`)).status).toBe(409);
  });
});

describe("what cannot be rolled back", () => {
  it("answers 404 for an unknown run and 400 for a bad body", async () => {
    const unknown = await stack.request("POST", "/v1/runs/run_00000000000000000000000000/rollback", {});
    expect(unknown.status).toBe(404);
    expect(unknown.body.error?.code).toBe("notFound");
    const { toolset } = await billingToolset({});
    const id = await startRun(stack, { toolset, script: CHARGES_THEN_WAIT });
    expect((await stack.request("POST", `/v1/runs/${id}/rollback`, { reason: 3 })).status).toBe(400);
    expect((await stack.request("POST", `/v1/runs/${id}/cancel`)).status).toBe(200);
    await waitForRun(stack, id);
    const ended = await stack.request("POST", `/v1/runs/${id}/rollback`, {});
    expect(ended.status).toBe(409);
    expect(ended.body.error?.message).toContain("only an open run can be rolled back");
  });
});
