/**
 * Cassettes: a finished run exported with its calls and outcomes, never credentials, and
 * replayed offline — the same script gives the same result without any tool; a changed
 * argument stops the replay at its seq, naming the expected and the actual call.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replayCassette } from "../../src/sdk/index.ts";
import type { Cassette } from "../../src/shared/run.ts";
import { runCli } from "../cli/cli-process.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";

let stack: RewindStack;
let server: TestMcpServer;
let cassette: Cassette;

const SCRIPT = `import { svc, sleep } from "rewind:tools";
export default async function main(input: { who: string }) {
  const [a, b] = await Promise.all([svc.echo({ message: "hello " + input.who }), svc.echo({ message: "roll " + Math.random().toFixed(3) })]);
  await sleep(10);
  const c = await svc.echo({ message: "at " + (Date.now() > 0) });
  return [a, b, c].map((r) => (r as { args: { message: string } }).args.message);
}`;

beforeAll(async () => {
  stack = await startRewindStack();
  server = await startMcpServer({ tools: [echoTool()] });
  const toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
  const id = await startRun(stack, { toolset, script: SCRIPT, input: { who: "world" } });
  const done = await waitForRun(stack, id);
  expect(done.status).toBe("completed");
  const response = await stack.request("GET", `/v1/runs/${id}/cassette`);
  expect(response.status).toBe(200);
  cassette = response.body as unknown as Cassette;
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

describe("cassettes", () => {
  it("hold the toolset, script, input and every call with its outcome", () => {
    expect(cassette).toMatchObject({
      format: "rewind.cassette/1",
      input: { who: "world" },
      scriptHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(cassette.entries.map((e) => [e.seq, e.tool, e.status])).toEqual([
      [1, "svc.echo", "completed"],
      [2, "svc.echo", "completed"],
      [3, "rewind.sleep", "completed"],
      [4, "svc.echo", "completed"],
    ]);
    expect(cassette.batches.flatMap((b) => b.seqs).sort()).toEqual([1, 2, 3, 4]);
  });

  it("replay the recorded script offline to the same result, and a changed script to its first difference", async () => {
    const calls = server.calls.length;
    const same = await replayCassette({ cassette });
    expect(same).toMatchObject({ ok: true, calls: 4 });
    const recorded = await stack.request("GET", `/v1/runs/${cassette.runId}`);
    expect(same.ok && same.result).toEqual(recorded.body.result);
    const changed = await replayCassette({ cassette, script: SCRIPT.replace('"hello "', '"goodbye "') });
    expect(changed).toMatchObject({
      ok: false,
      error: {
        kind: "divergence",
        seq: 1,
        expected: { tool: "svc.echo", args: { message: "hello world" } },
        actual: { tool: "svc.echo", args: { message: "goodbye world" } },
      },
    });
    const wrongType = await replayCassette({
      cassette,
      script: 'export default async () => { const n: number = "s"; return n; };',
    });
    expect(wrongType).toMatchObject({ ok: false, error: { kind: "typeCheck" } });
    expect(server.calls.length).toBe(calls);
  });

  it("replay from the CLI, with the difference in one sentence", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "rewind-cassette-"));
    await writeFile(path.join(dir, "run.cassette.json"), JSON.stringify(cassette));
    await writeFile(path.join(dir, "changed.ts"), SCRIPT.replace("await sleep(10);", "await sleep(20);"));
    const same = await runCli(["replay", path.join(dir, "run.cassette.json")], { url: stack.api.url, cwd: dir });
    expect(same.code).toBe(0);
    expect(same.stdout).toContain("replayed 4 calls");
    const changed = await runCli(["replay", path.join(dir, "run.cassette.json"), path.join(dir, "changed.ts")], {
      url: stack.api.url,
      cwd: dir,
    });
    expect(changed.code).toBe(1);
    expect(changed.stderr).toBe(
      'rewind: call 3 differs from the recording: expected rewind.sleep({"ms":10}), the script made rewind.sleep({"ms":20})\n',
    );
  });
});
