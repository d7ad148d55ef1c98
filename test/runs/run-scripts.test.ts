/**
 * Runs of tool-less scripts end to end: API → Temporal → sandbox → result, with the failure
 * paths a model-written script takes (throws, runaway loops, allocation bombs, type errors).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";

let stack: RewindStack;

beforeAll(async () => {
  stack = await startRewindStack({ env: { REWIND_SANDBOX_CPU_MS: "1500", REWIND_SANDBOX_MEMORY_MB: "64" } });
});
afterAll(async () => {
  await stack?.stop();
});

async function run(script: string, input?: unknown, timeoutMs?: number) {
  const started = await stack.request("POST", "/v1/runs", { script, input });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  return waitForRun(stack, String(started.body.id), timeoutMs);
}

describe("runs of tool-less scripts", () => {
  it("returns the default export's result for the run's input", async () => {
    const done = await run(
      'export default async function main(input: { words: string[] }) {\n  return { count: input.words.length, joined: input.words.join("-") };\n}',
      { words: ["a", "b", "c"] },
    );
    expect(done.status).toBe("completed");
    expect(done.result).toEqual({ count: 3, joined: "a-b-c" });
  });

  it("fails the run with the thrown message and the script's own line", async () => {
    const script = [
      "type Input = { n: number };",
      "",
      "export default async function main(input: Input) {",
      "  if (input.n > 1) {",
      "    throw new Error(`too big: ${input.n}`);",
      "  }",
      "  return input.n;",
      "}",
    ].join("\n");
    const done = await run(script, { n: 5 });
    expect(done.status).toBe("failed");
    expect(done.error?.message).toContain("too big: 5");
    const details = done.error?.details as { stack: string };
    expect(details.stack).toContain("script.ts:5:11");
  });

  it("fails a runaway loop with the CPU limit, and the next run still completes", async () => {
    // On a loaded machine the step can meet its wall-time backstop first: it is taken again until it gets its CPU.
    const looped = await run("export default async function main() {\n  for (;;) {}\n}", undefined, 120_000);
    expect(looped.status).toBe("failed");
    expect(looped.error?.type).toBe("LimitExceeded");
    expect(looped.error?.message).toMatch(/CPU time limit of 1500 ms/);
    const next = await run('export default async () => "still serving";');
    expect(next.result).toBe("still serving");
  }, 180_000);

  it("fails an allocation bomb with the memory limit", async () => {
    const done = await run(
      'export default async function main() {\n  const hoard: string[][] = [];\n  for (;;) hoard.push(new Array(1_000_000).fill("x"));\n}',
    );
    expect(done.status).toBe("failed");
    expect(done.error?.type).toBe("LimitExceeded");
    expect(done.error?.message).toMatch(/memory limit of 64 MB/);
  });

  it("sleeps on a durable timer and sees the workflow's clock move", async () => {
    const done = await run(
      [
        'import { sleep } from "rewind:tools";',
        "export default async function main() {",
        "  const before = Date.now();",
        '  await sleep("1s");',
        "  return Date.now() - before;",
        "}",
      ].join("\n"),
    );
    expect(done.status).toBe("completed");
    expect(done.result).toBeGreaterThanOrEqual(1000);
  });

  it("gives a bad sleep duration to the script as a ToolError it can catch", async () => {
    const done = await run(
      [
        'import { sleep, ToolError } from "rewind:tools";',
        "export default async function main() {",
        '  try { await sleep("whenever"); return "slept"; }',
        '  catch (e) { return e instanceof ToolError ? [e.code, e.seq] : "other"; }',
        "}",
      ].join("\n"),
    );
    expect(done.result).toEqual(["invalidArguments", 1]);
  });

  it("fails a script that waits for a promise nothing will settle", async () => {
    const done = await run("export default async function main() {\n  await new Promise(() => {});\n}");
    expect(done.status).toBe("failed");
    expect(done.error?.type).toBe("ScriptStuck");
  });

  it("fails a script whose result is not JSON", async () => {
    const done = await run("export default async () => { const a: any = {}; a.self = a; return a; };");
    expect(done.status).toBe("failed");
    expect(done.error?.message).toMatch(/not JSON/);
  });
});
