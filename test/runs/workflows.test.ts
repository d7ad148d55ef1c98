/**
 * The workflows built-in: stored workflow scripts, started by scripts as child runs whose result
 * can be awaited, signalled between runs, and — through derived toolsets — the same servers
 * with other workflows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";

let stack: RewindStack;
beforeAll(async () => {
  stack = await startRewindStack();
});
afterAll(async () => {
  await stack?.stop();
});

async function store(name: string, script: string): Promise<string> {
  const { status, body } = await stack.request("POST", "/v1/workflows", { name, script });
  expect(status, JSON.stringify(body)).toBe(201);
  return String(body.id);
}

describe("workflows", () => {
  it("stores type-checked workflow scripts under a content address", async () => {
    const again = await stack.request("POST", "/v1/workflows", {
      name: "same",
      script: "export default async () => 1;",
    });
    const repeat = await stack.request("POST", "/v1/workflows", {
      name: "same",
      script: "export default async () => 1;",
    });
    expect(again.body.id).toMatch(/^wf_[0-9a-f]{64}$/);
    expect(repeat.status).toBe(200);
    expect(repeat.body.id).toBe(again.body.id);
    const bad = await stack.request("POST", "/v1/workflows", {
      name: "bad",
      script: "export default async (i: { n: number }) => i.n.x;",
    });
    expect(bad.status).toBe(422);
    expect(
      (
        await stack.request("POST", "/v1/workflows", {
          name: "not-an-identifier",
          script: "export default async () => 1;",
        })
      ).status,
    ).toBe(400);
    expect((await stack.request("GET", `/v1/workflows/${String(again.body.id)}`)).body).toMatchObject({ name: "same" });
  });

  it("starts a child run, awaits its result, and signals a run it started", async () => {
    const double = await store("double", "export default async (input: { n: number }) => input.n * 2;");
    const listener = await store(
      "listener",
      'import { waitForSignal } from "rewind:tools";\nexport default async () => ({ heard: await waitForSignal<string>("ping") });',
    );
    const toolset = await registerToolset(stack, { workflows: { double, listener } });
    const id = await startRun(stack, {
      toolset,
      script: `import { workflows } from "rewind:tools";
export default async function main() {
  const child = await workflows.double.start({ n: 21 });
  const ear = await workflows.listener.start();
  await workflows.listener.signal(ear.runId, "ping", "hello");
  return { child: child.runId, doubled: await child.result(), heard: await ear.result() };
}`,
    });
    const done = await waitForRun(stack, id, 60_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    const result = done.result as { child: string; doubled: number; heard: unknown };
    expect(result.doubled).toBe(42);
    expect(result.heard).toEqual({ heard: "hello" });
    const child = await waitForRun(stack, result.child);
    expect(child).toMatchObject({ status: "completed", result: 42 });
  }, 90_000);

  it("gives a derived toolset its own workflows over the same tools", async () => {
    const double = await store("scale", "export default async (input: { n: number }) => input.n * 2;");
    const triple = await store("scale", "export default async (input: { n: number }) => input.n * 3;");
    const base = await registerToolset(stack, { http: { allowedHosts: ["api.example.com"] } });
    const twice = await registerToolset(stack, { base, workflows: { scale: double } });
    const thrice = await registerToolset(stack, { base, workflows: { scale: triple } });
    const script =
      'import { workflows } from "rewind:tools";\nexport default async () => (await workflows.scale.start({ n: 21 })).result();';
    const [a, b] = await Promise.all([
      startRun(stack, { toolset: twice, script }),
      startRun(stack, { toolset: thrice, script }),
    ]);
    expect((await waitForRun(stack, a, 60_000)).result).toBe(42);
    expect((await waitForRun(stack, b, 60_000)).result).toBe(63);
    const baseOnly = await stack.request("POST", "/v1/runs", { toolset: base, script });
    expect(baseOnly.status).toBe(422);
  }, 90_000);
});
