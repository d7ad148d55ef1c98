/**
 * Decisions from the `rewind` command, as child processes against a real stack and an MCP server
 * whose first attempt of each key loses its connection once sent: `rewind runs resolve|retry|fail
 * <id> <seq>` decide a call parked on that unknown outcome, `rewind run --approve-script` starts a
 * run that waits for its script's approval and `rewind runs approve-script|reject-script <id>`
 * decide it. Each says what it did in one line (or prints the API's JSON with --json), and a
 * decision the run is not waiting for exits 1 with the API's refusal in one line.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { IDEMPOTENCY_KEY, chargeOnRetryTool, effectCounterTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type ApiBody, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { runCli, type CliResult } from "./cli-process.ts";

const CHARGE_SCRIPT = `import { pay, ToolError } from "rewind:tools";
export default async function main() {
  try {
    return ["ok", await pay.charge({ amount: 5 })];
  } catch (e) {
    return e instanceof ToolError ? [e.code, e.message] : ["other", String(e)];
  }
}
`;

let stack: RewindStack;
let server: TestMcpServer;
let dir: string;
let toolset: string;
const invoices = effectCounterTool({ name: "send_invoice" });
const refunds = effectCounterTool({ name: "refund" });
const cli = (...args: string[]) => runCli(args, { url: stack.api.url, cwd: dir });

beforeAll(async () => {
  [stack, server, dir] = await Promise.all([
    startRewindStack(),
    startMcpServer({ tools: [chargeOnRetryTool(), invoices.tool, refunds.tool] }),
    mkdtemp(path.join(tmpdir(), "rewind-decisions-cli-")),
  ]);
  toolset = await registerToolset(stack, {
    mcpServers: { pay: { url: server.url } },
    policies: {
      "pay.charge": { onInterruption: "at_most_once", onUnknown: "park" },
      "pay.refund": { approval: true },
    },
  });
  await writeFile(path.join(dir, "charged.json"), '{ "charged": true }\n');
  await writeFile(
    path.join(dir, "invoice.ts"),
    `import { pay } from "rewind:tools";
export default async function main() {
  await pay.send_invoice({ label: "march" });
  return "sent";
}
`,
  );
}, 90_000);
afterAll(async () => {
  await stack?.stop();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Calls of `tool` the server received from the run, any seq. */
const sentBy = (id: string, tool: string) =>
  server.calls.filter((c) => c.name === tool && String(c.meta[IDEMPOTENCY_KEY]).startsWith(`${id}/`)).length;

const runView = async (id: string) => (await stack.request("GET", `/v1/runs/${id}`)).body;

async function parked(id: string, reason: string): Promise<ApiBody> {
  return waitFor(`run ${id} to park on call 1 for ${reason}`, () => runView(id), {
    timeoutMs: 30_000,
    until: (body) => body.status === "parked" && JSON.stringify(body["parked"]).includes(`"reason":"${reason}"`),
  });
}

async function chargeParked(): Promise<string> {
  const id = await startRun(stack, { toolset, script: CHARGE_SCRIPT });
  await parked(id, "outcomeUnknown");
  return id;
}

async function waitingForApproval(id: string): Promise<ApiBody> {
  return waitFor(`run ${id} to wait for its script's approval`, () => runView(id), {
    timeoutMs: 30_000,
    until: (body) =>
      body.status === "parked" && (body["scriptApproval"] as { state?: string } | undefined)?.state === "waiting",
  });
}

/** A refusal: exit 1, one line on stderr, nothing on stdout (without --json). */
function expectRefused(result: CliResult, line: string): void {
  expect(result, JSON.stringify(result)).toMatchObject({ code: 1, stdout: "", stderr: `rewind: ${line}\n` });
}

describe("rewind runs resolve|retry|fail: a call parked on an unknown outcome", () => {
  it("runs show names the three decisions; resolve ends the call with a result from a file, unsent", async () => {
    const id = await chargeParked();
    const shown = await cli("runs", "show", id);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`  parked    call 1 pay.charge({"amount":5}) waits for outcomeUnknown\n`);
    expect(shown.stdout).toContain(
      `            decide: rewind --url ${stack.api.url} runs resolve ${id} 1 --result '{…}' | retry ${id} 1 | fail ${id} 1\n`,
    );

    const missing = await cli("runs", "resolve", id, "1");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^rewind: --result is required\n/);
    const notJson = await cli("runs", "resolve", id, "1", "--result", "{charged: true}");
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/^rewind: --result must be JSON: /);
    expectRefused(
      await cli("runs", "resolve", id, "1", "--result", '{"charged":"yes"}'),
      "the result does not fit the output schema of pay.charge: result/charged must be boolean",
    );
    expectRefused(await cli("runs", "resolve", id, "7", "--result", "{}"), `call 7 of run ${id} was not found`);

    const resolved = await cli("runs", "resolve", id, "1", "--result", "@charged.json", "--by", "ops");
    expect(resolved).toEqual({
      code: 0,
      stdout: `resolved call 1 of ${id} as default/loopback for ops: the script gets the result, nothing is sent\n`,
      stderr: "",
    });
    expect((await waitForRun(stack, id, 30_000)).result).toEqual(["ok", { charged: true }]);
    expect(sentBy(id, "charge")).toBe(1);
    expectRefused(
      await cli("runs", "resolve", id, "1", "--result", "@charged.json"),
      `run ${id} is completed; its calls can no longer be decided`,
    );
  }, 90_000);

  it("resolve --json prints the decision as the journal records it", async () => {
    const id = await chargeParked();
    const resolved = await cli("runs", "resolve", id, "1", "--result", '{"charged":false}', "--json");
    expect([resolved.code, resolved.stderr]).toEqual([0, ""]);
    expect(JSON.parse(resolved.stdout)).toEqual({
      seq: 1,
      decidedBy: { principal: "default/loopback", at: expect.any(Number), decision: "resolved" },
    });
    expect((await waitForRun(stack, id, 30_000)).result).toEqual(["ok", { charged: false }]);
    expect(sentBy(id, "charge")).toBe(1);
  }, 90_000);

  it("retry sends the call again with the same key; --json prints the decision", async () => {
    const human = await chargeParked();
    const retried = await cli("runs", "retry", human, "1", "--by", "ops");
    expect(retried).toEqual({
      code: 0,
      stdout: `call 1 of ${human} is sent again, with the same idempotency key as default/loopback for ops\n`,
      stderr: "",
    });
    expect((await waitForRun(stack, human, 30_000)).result).toEqual(["ok", { charged: true, attempt: 2 }]);
    expect(server.calls.filter((c) => c.meta[IDEMPOTENCY_KEY] === `${human}/1`).length).toBe(2);

    const json = await chargeParked();
    const answer = await cli("runs", "retry", json, "1", "--json");
    expect([answer.code, answer.stderr]).toEqual([0, ""]);
    expect(JSON.parse(answer.stdout)).toMatchObject({ seq: 1, decidedBy: { decision: "retried" } });
    expect((await waitForRun(stack, json, 30_000)).result).toEqual(["ok", { charged: true, attempt: 2 }]);
  }, 90_000);

  it("fail gives the script ToolError(outcomeUnknown) with the reason; --json prints the decision", async () => {
    const human = await chargeParked();
    const failed = await cli("runs", "fail", human, "1", "--reason", "the ledger has no charge");
    expect(failed).toEqual({
      code: 0,
      stdout: `failed call 1 of ${human} as default/loopback: the script gets ToolError(outcomeUnknown)\n`,
      stderr: "",
    });
    expect((await waitForRun(stack, human, 30_000)).result).toEqual([
      "outcomeUnknown",
      expect.stringMatching(/may or may not have taken effect.*\(failed by the harness: the ledger has no charge\)$/),
    ]);
    expect(sentBy(human, "charge")).toBe(1);

    const json = await chargeParked();
    const answer = await cli("runs", "fail", json, "1", "--by", "ops", "--json");
    expect([answer.code, answer.stderr]).toEqual([0, ""]);
    expect(JSON.parse(answer.stdout)).toMatchObject({ seq: 1, decidedBy: { by: "ops", decision: "failed" } });
    expect((await waitForRun(stack, json, 30_000)).result).toEqual(["outcomeUnknown", expect.any(String)]);
  }, 90_000);

  it("refuses a call parked for another reason: exit 1, one line, and --json prints the API's error", async () => {
    const id = await startRun(stack, {
      toolset,
      script: 'import { pay } from "rewind:tools";\nexport default async () => await pay.refund({ label: "r" });',
    });
    await parked(id, "approval");
    const refusal = `call 1 of run ${id} is not parked on an unknown outcome (it waits for approval)`;
    expectRefused(await cli("runs", "resolve", id, "1", "--result", "@charged.json"), refusal);
    expectRefused(await cli("runs", "retry", id, "1"), refusal);
    const json = await cli("runs", "fail", id, "1", "--json");
    expect([json.code, json.stderr]).toEqual([1, `rewind: ${refusal}\n`]);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: "conflict", message: refusal } });
    expect(sentBy(id, "refund")).toBe(0);
    // Still parked for approval: the refused decisions changed nothing.
    expect((await parked(id, "approval"))["parked"]).toEqual([expect.objectContaining({ seq: 1, reason: "approval" })]);
    expect((await cli("runs", "cancel", id)).code).toBe(0);
  }, 90_000);
});

describe("rewind run --approve-script, rewind runs approve-script|reject-script", () => {
  it("starts a run that waits for its script's approval; approve-script lets it run", async () => {
    const started = await cli("run", "invoice.ts", "--toolset", toolset, "--approve-script");
    expect([started.code, started.stderr]).toEqual([0, ""]);
    const id = /^started (run_\w+) \(\w+\)$/m.exec(started.stdout)?.[1] ?? "";
    expect(id, started.stdout).not.toBe("");
    expect(started.stdout).toContain(`approve its script: rewind --url ${stack.api.url} runs approve-script ${id}\n`);
    await waitingForApproval(id);
    const shown = await cli("runs", "show", id);
    expect(shown.stdout).toContain(`${id}  parked\n`);
    expect(shown.stdout).toContain(
      `  waits     for its script's approval, before its first step\n` +
        `            approve: rewind --url ${stack.api.url} runs approve-script ${id} | reject: rewind --url ${stack.api.url} runs reject-script ${id}\n`,
    );
    expect(sentBy(id, "send_invoice")).toBe(0);

    const approved = await cli("runs", "approve-script", id, "--by", "alice");
    expect(approved).toEqual({
      code: 0,
      stdout: `approved the script of ${id} as default/loopback for alice: it runs\n  watch: rewind --url ${stack.api.url} runs watch ${id}\n`,
      stderr: "",
    });
    expect(await waitForRun(stack, id, 30_000)).toMatchObject({ status: "completed", result: "sent" });
    expect(sentBy(id, "send_invoice")).toBe(1);
    expectRefused(
      await cli("runs", "approve-script", id),
      `run ${id} is completed; its script can no longer be approved or rejected`,
    );
  }, 90_000);

  it("reject-script ends the run failed with ScriptRejected, its script never run", async () => {
    const started = await cli("run", "invoice.ts", "--toolset", toolset, "--approve-script", "--json");
    expect([started.code, started.stderr]).toEqual([0, ""]);
    const id = String((JSON.parse(started.stdout) as { id: string }).id);
    await waitingForApproval(id);
    const rejected = await cli("runs", "reject-script", id, "--reason", "sends invoices", "--by", "bob");
    expect(rejected).toEqual({
      code: 0,
      stdout: `rejected the script of ${id} as default/loopback for bob: the run fails with ScriptRejected, never run\n`,
      stderr: "",
    });
    const done = await waitForRun(stack, id, 30_000);
    expect(done.status).toBe("failed");
    expect(done.error).toMatchObject({ type: "ScriptRejected" });
    expect(sentBy(id, "send_invoice")).toBe(0);
  }, 90_000);

  it("--json prints each decision as the run records it", async () => {
    const approveId = String(
      (
        JSON.parse((await cli("run", "invoice.ts", "--toolset", toolset, "--approve-script", "--json")).stdout) as {
          id: string;
        }
      ).id,
    );
    const asked = await stack.request("POST", "/v1/runs", { toolset, script: CHARGE_SCRIPT, approveScript: true });
    expect(asked.status, JSON.stringify(asked.body)).toBe(201);
    const rejectId = String(asked.body.id);
    await Promise.all([waitingForApproval(approveId), waitingForApproval(rejectId)]);
    const [approved, rejected] = await Promise.all([
      cli("runs", "approve-script", approveId, "--json"),
      cli("runs", "reject-script", rejectId, "--reason", "not today", "--json"),
    ]);
    expect([approved.code, approved.stderr, rejected.code, rejected.stderr]).toEqual([0, "", 0, ""]);
    expect(JSON.parse(approved.stdout)).toEqual({
      decidedBy: { principal: "default/loopback", at: expect.any(Number), decision: "approved" },
    });
    expect(JSON.parse(rejected.stdout)).toMatchObject({ decidedBy: { decision: "rejected" } });
    expect((await waitForRun(stack, approveId, 30_000)).result).toBe("sent");
    expect((await waitForRun(stack, rejectId, 30_000)).error).toMatchObject({ type: "ScriptRejected" });
    expect(sentBy(rejectId, "charge")).toBe(0);
  }, 90_000);

  it("refuses to decide the script of a run that does not wait for it", async () => {
    const id = await startRun(stack, {
      toolset,
      script: 'import { pay } from "rewind:tools";\nexport default async () => await pay.refund({ label: "r" });',
    });
    await parked(id, "approval");
    expectRefused(await cli("runs", "approve-script", id), `run ${id} is not waiting for its script's approval`);
    const json = await cli("runs", "reject-script", id, "--json");
    expect([json.code, json.stderr]).toEqual([1, `rewind: run ${id} is not waiting for its script's approval\n`]);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: "conflict" } });
    expect((await runView(id))["scriptApproval"]).toBeUndefined();
    expect((await cli("runs", "cancel", id)).code).toBe(0);
  }, 90_000);
});
