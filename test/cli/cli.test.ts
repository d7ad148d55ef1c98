/**
 * The `rewind` client commands, run as child processes against a real stack: a toolset
 * registered from YAML, a run followed with --watch to its result, a call parked for approval
 * and approved from a second process while the first watches, a call's progress and its
 * server's question shown by watch and answered from a second process, type errors shown like tsc,
 * --json output, and one-sentence errors with their exit codes.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { createCallReports } from "../../src/activities/call-reports.ts";
import { echoTool, effectCounterTool, gateTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";
import { runCli, spawnCli } from "./cli-process.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
let server: TestMcpServer;
let dir: string;
let toolset: string;
const invoices = effectCounterTool({ name: "send_invoice" });
const gate = gateTool("sync");
const cli = (...args: string[]) => runCli(args, { url: stack.api.url, cwd: dir });

beforeAll(async () => {
  [stack, server, dir] = await Promise.all([
    startRewindStack(),
    startMcpServer({ tools: [echoTool(), invoices.tool, gate.tool] }),
    mkdtemp(path.join(tmpdir(), "rewind-cli-")),
  ]);
  await writeFile(
    path.join(dir, "toolset.yaml"),
    [
      "mcpServers:",
      "  billing:",
      `    url: ${server.url}`,
      "policies:",
      "  billing.send_invoice:",
      "    approval: true",
      "",
    ].join("\n"),
  );
  await writeFile(
    path.join(dir, "echo.ts"),
    [
      'import { billing } from "rewind:tools";',
      "export default async function main(input: { n: number }) {",
      '  await billing.echo({ message: "first" });',
      '  await billing.echo({ message: "second" });',
      "  return { doubled: input.n * 2 };",
      "}",
    ].join("\n"),
  );
  await writeFile(
    path.join(dir, "invoice.ts"),
    [
      'import { billing } from "rewind:tools";',
      "export default async function main() {",
      '  await billing.send_invoice({ label: "march" });',
      '  return "sent";',
      "}",
    ].join("\n"),
  );
  await writeFile(
    path.join(dir, "sync.ts"),
    [
      'import { billing } from "rewind:tools";',
      "export default async function main() {",
      "  return await billing.sync({});",
      "}",
    ].join("\n"),
  );
  await writeFile(
    path.join(dir, "broken.ts"),
    "export default async function main(input: { n: number }) {\n  return input.x;\n}\n",
  );
});
afterAll(async () => {
  gate.releaseAll();
  await stack?.stop();
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("rewind toolsets", () => {
  it("registers a toolset from YAML and shows what a model sees", async () => {
    const registered = await cli("toolsets", "register", "toolset.yaml");
    expect(registered.stderr).toBe("");
    expect(registered.code).toBe(0);
    toolset = /toolset (ts_[0-9a-f]{64})/.exec(registered.stdout)?.[1] ?? "";
    expect(toolset).not.toBe("");
    expect(registered.stdout).toMatch(/billing\.send_invoice\s+mcp\s+approval/);

    const prompt = await cli("toolsets", "show", toolset, "--prompt");
    expect(prompt.code).toBe(0);
    expect(prompt.stdout).toContain(
      'import { billing, sleep, waitForSignal, webhook, ToolError } from "rewind:tools";',
    );
    expect(prompt.stdout).toContain("billing.send_invoice(");

    const json = await cli("toolsets", "show", toolset, "--json");
    expect((JSON.parse(json.stdout) as { id: string }).id).toBe(toolset);
  });
});

describe("rewind run", () => {
  it("follows a run with --watch to its result, showing each call", async () => {
    const { code, stdout, stderr } = await cli(
      "run",
      "echo.ts",
      "--toolset",
      toolset,
      "--input",
      '{"n":21}',
      "--watch",
    );
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(/^started run_\w+ · toolset ts_/);
    expect(stdout).toMatch(/✓ 1 billing\.echo.* \d+ ms → /);
    expect(stdout).toMatch(/✓ 2 billing\.echo/);
    expect(stdout).toMatch(/completed in [\d.]+ m?s\nresult: \{"doubled":42\}\n/);
  });

  it("shows how to approve a parked call, and finishes once another process approved it", async () => {
    const watch = spawnCli(["run", "invoice.ts", "--toolset", toolset, "--watch"], { url: stack.api.url, cwd: dir });
    // The hint names the API it was given, so it can be pasted anywhere.
    const hint = new RegExp(`approve: rewind --url ${stack.api.url} runs approve (run_\\w+) 1\\n`);
    const output = await watch.waitFor(hint);
    const runId = hint.exec(output)?.[1] ?? "";
    expect(output).toContain('⏸ 1 billing.send_invoice({"label":"march"}) waits for approval');
    expect(invoices.state.total).toBe(0);

    const approved = await cli("runs", "approve", runId, "1", "--by", "ada");
    expect(approved).toMatchObject({
      code: 0,
      stdout: `approved call 1 of ${runId} as default/loopback for ada\n`,
      stderr: "",
    });
    const done = await watch.done;
    expect(done.code).toBe(0);
    expect(done.stdout).toContain("→ 1 billing.send_invoice approved, sending");
    expect(done.stdout).toMatch(/result: "sent"\n/);
    expect(invoices.state.total).toBe(1);

    const again = await cli("runs", "approve", runId, "1");
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`rewind: run ${runId} is completed; its calls can no longer be decided\n`);
  });

  it("shows a call's progress and its server's question, and goes on once another process answered it", async () => {
    const watch = spawnCli(["run", "sync.ts", "--toolset", toolset, "--watch"], { url: stack.api.url, cwd: dir });
    const runId = /started (run_\w+)/.exec(await watch.waitFor(/started run_\w+/))?.[1] ?? "";
    await waitFor(`run ${runId}'s call to reach the tool`, () => gate.holds(runId), { intervalMs: 50 });
    // What the MCP activity does when its server reports progress and asks for input.
    const reports = createCallReports(stack.client);
    const call = { namespace: "default", runId, seq: 1, attempt: 1 };
    reports.progress(call, { progress: 40, total: 100, message: "indexing…" });
    await watch.waitFor("⋯ call 1 billing.sync 40/100 indexing…\n");
    const schema = { type: "object", properties: { project: { type: "string" } }, required: ["project"] };
    const asked = reports.askInput(
      call,
      { message: "Which project?", requestedSchema: schema },
      new AbortController().signal,
    );
    const output = await watch.waitFor(`rewind --url ${stack.api.url} runs answer ${runId} 1 --accept`);
    expect(output).toContain("? 1 billing.sync asks: Which project?\n");

    expect(await cli("runs", "answer", runId, "1")).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("give exactly one of --accept, --decline, --cancel"),
    });
    const misfit = await cli("runs", "answer", runId, "1", "--accept", '{"name":"x"}');
    expect(misfit.code).toBe(1);
    expect(misfit.stderr).toMatch(/^rewind: the content does not fit the schema call 1 asked for: .*project/);
    const shown = await cli("runs", "show", runId);
    expect(shown.stdout).toContain("waits for elicitationRequested");
    expect(shown.stdout).toContain("asks: Which project?");
    const answered = await cli("runs", "answer", runId, "1", "--accept", '{"project":"rewind"}');
    expect(answered).toMatchObject({
      code: 0,
      stdout: `answered call 1 of ${runId} (accept); the call goes on\n`,
      stderr: "",
    });
    await expect(asked).resolves.toEqual({ action: "accept", content: { project: "rewind" } });

    gate.release(runId);
    const done = await watch.done;
    expect(done.code).toBe(0);
    expect(done.stdout).toContain("→ 1 billing.sync input accepted, the call goes on");
    expect(done.stdout).toContain(`result: {"released":"${runId}"}`);
    const again = await cli("runs", "answer", runId, "1", "--decline");
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`rewind: run ${runId} is completed; its calls can no longer be answered\n`);
  });

  it("shows type errors like tsc: position, code, source line and a caret", async () => {
    const { code, stdout, stderr } = await cli("run", "broken.ts");
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain("broken.ts:2:16 - error TS2339: Property 'x' does not exist on type '{ n: number; }'.");
    expect(stderr).toContain(`\n2    return input.x;\n   ${" ".repeat(15)}^\n`);
  });
});

describe("--json and errors", () => {
  it("prints the API's JSON and nothing else", async () => {
    const started = await cli("run", "echo.ts", "--toolset", toolset, "--input", '{"n":1}', "--watch", "--json");
    expect(started.code).toBe(0);
    const run = JSON.parse(started.stdout) as { id: string; status: string; result: unknown };
    expect(run).toMatchObject({ status: "completed", result: { doubled: 2 } });
    const list = JSON.parse((await cli("runs", "list", "--json")).stdout) as { runs: { id: string }[] };
    expect(list.runs.map((r) => r.id)).toContain(run.id);
    const listIds = async (...filters: string[]) =>
      (JSON.parse((await cli("runs", "list", ...filters, "--json")).stdout) as { runs: { id: string }[] }).runs.map(
        (r) => r.id,
      );
    // Visibility catches up with the run's close on its own time.
    await waitFor(
      `runs list --status completed to list ${run.id}`,
      () => listIds("--status", "completed", "--toolset", toolset),
      { until: (completed) => completed.includes(run.id) },
    );
    expect(await listIds("--status", "parked")).not.toContain(run.id);
    expect(await listIds("--started-after", new Date(Date.now() + 60_000).toISOString())).toEqual([]);
    const journal = JSON.parse((await cli("runs", "journal", run.id, "--json")).stdout) as {
      entries: { seq: number; tool: string }[];
    };
    expect(journal.entries.map((e) => [e.seq, e.tool])).toEqual([
      [1, "billing.echo"],
      [2, "billing.echo"],
    ]);
    // Cancelling a run that has ended says so, and changes nothing.
    const cancelled = await cli("runs", "cancel", run.id);
    expect(cancelled).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^the run had already ended \(completed\): nothing to cancel\n/),
    });
    expect(JSON.parse((await cli("runs", "show", run.id, "--json")).stdout)).toMatchObject({ status: "completed" });
  });

  it("sends a run the signal its script waits for, and says what is wrong with a payload that is not JSON", async () => {
    await writeFile(
      path.join(dir, "wait.ts"),
      'import { waitForSignal } from "rewind:tools";\nexport default async function main() { return await waitForSignal("go"); }\n',
    );
    const started = JSON.parse((await cli("run", "wait.ts", "--toolset", toolset, "--json")).stdout) as { id: string };
    const bad = await cli("runs", "signal", started.id, "go", "--payload", "{nope");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--payload must be JSON/);
    const sent = await cli("runs", "signal", started.id, "go", "--payload", '{"ok":true}');
    expect(sent).toMatchObject({ code: 0, stdout: `signal "go" sent to ${started.id}\n` });
    const done = await waitFor(
      "the signalled run to end",
      async () =>
        JSON.parse((await cli("runs", "show", started.id, "--json")).stdout) as { status: string; result?: unknown },
      { until: (run) => run.status !== "running" },
    );
    expect(done).toMatchObject({ status: "completed", result: { ok: true } });
    const again = await cli("runs", "signal", started.id, "go");
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/can no longer receive signals/);
  });

  it("saves a run's script as a workflow a toolset can pin", async () => {
    const started = await cli("run", "echo.ts", "--toolset", toolset, "--input", '{"n":2}', "--watch", "--json");
    const run = JSON.parse(started.stdout) as { id: string };
    const saved = await cli("runs", "save", run.id, "doubler", "--description", "Doubles n");
    expect(saved.code, saved.stderr).toBe(0);
    const id = /^saved the script of run_\w+ as (wf_[0-9a-f]{64}),/.exec(saved.stdout)?.[1];
    expect(saved.stdout).toBe(
      `saved the script of ${run.id} as ${id}, workflows.doubler (toolset ${toolset})\npin it in a toolset: workflows: { doubler: ${id} }\n`,
    );
    const again = await cli("runs", "save", run.id, "doubler", "--description", "Doubles n", "--json");
    expect(JSON.parse(again.stdout)).toEqual({ id, name: "doubler", toolset, description: "Doubles n" });
    const bad = await cli("runs", "save", run.id, "not-a-name");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("JavaScript identifier");
  });

  it("says in one sentence that a run does not exist, with exit code 1", async () => {
    const { code, stdout, stderr } = await cli("runs", "show", "run_0123456789ABCDEFGHJK");
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toBe("rewind: run run_0123456789ABCDEFGHJK was not found\n");
  });

  it("prints a command's help with --help or -h, exit code 0, and answers an unknown command with exit code 2", async () => {
    const [cancel, runs, show, worker, unknown] = await Promise.all([
      cli("runs", "cancel", "--help"),
      cli("runs", "--help"),
      cli("toolsets", "show", "-h"),
      cli("worker", "--help"),
      cli("frobnicate"),
    ]);
    expect(cancel).toEqual({ code: 0, stdout: "usage: rewind runs cancel <id> [--json]\n", stderr: "" });
    expect(runs).toMatchObject({ code: 0, stderr: "", stdout: expect.stringMatching(/^usage:\n {2}runs list /) });
    expect(runs.stdout).not.toContain("toolsets register");
    expect(show).toMatchObject({ code: 0, stdout: expect.stringMatching(/^usage: rewind toolsets show <id>/) });
    expect(worker).toEqual({
      code: 0,
      stdout: "usage:\n  worker    run a Rewind worker against TEMPORAL_ADDRESS\n",
      stderr: "",
    });
    expect(unknown).toMatchObject({
      code: 2,
      stdout: "",
      stderr: expect.stringMatching(/^rewind: unknown command "frobnicate"\n\nusage: rewind <command>/),
    });
  });

  it("talks to the API --url names, over REWIND_URL", async () => {
    const [elsewhere, here, first, wrong] = await Promise.all([
      cli("runs", "list", "--url", "http://127.0.0.1:1"),
      cli("runs", "list", "--json", `--url=${stack.api.url}`),
      // As the hints the CLI prints write it: before the command.
      cli("--url", stack.api.url, "runs", "list", "--json"),
      cli("runs", "list", "--url", "ftp://example"),
    ]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toHaveProperty("runs");
    expect(elsewhere).toMatchObject({ code: 1, stderr: expect.stringContaining("http://127.0.0.1:1") });
    expect(here.code).toBe(0);
    expect(JSON.parse(here.stdout)).toHaveProperty("runs");
    expect(wrong).toMatchObject({ code: 1, stderr: 'rewind: --url must be an http(s) URL, got "ftp://example"\n' });
  });

  it("answers usage mistakes with exit code 2", async () => {
    const [missing, unknown, later, status, since] = await Promise.all([
      cli("runs", "approve", "run_x"),
      cli("runs", "frobnicate"),
      cli("runs", "fork", "run_x"),
      cli("runs", "list", "--status", "asleep"),
      cli("runs", "list", "--started-after", "monday"),
    ]);
    expect(status).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(
        /^rewind: --status must be one of running, parked, completed, failed, cancelled, rolledBack, got "asleep"/,
      ),
    });
    expect(since).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("startedAfter: startedAfter must be an ISO 8601 date-time"),
    });
    expect(missing).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^rewind: missing <seq>\nusage: rewind runs approve/),
    });
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown command "runs frobnicate"') });
    expect(later).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^rewind: missing <script>\nusage: rewind runs fork/),
    });
  });
});
