/**
 * Long runs continue as new before history grows too long, carrying the journal: with a small
 * threshold, a run crosses several executions and still returns the right result, with every
 * call in its journal, including calls in flight when the run drained.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";

let stack: RewindStack;
beforeAll(async () => {
  stack = await startRewindStack({ env: { REWIND_CONTINUE_AS_NEW_EVENTS: "60" } });
});
afterAll(async () => {
  await stack?.stop();
});

describe("continue-as-new", () => {
  it("keeps the result and the journal whole across executions", async () => {
    const script = [
      "import { sleep } from \"rewind:tools\";",
      "export default async function main(input: { rounds: number }) {",
      "  const seen: number[] = [];",
      "  for (let i = 0; i < input.rounds; i++) {",
      "    await Promise.all([sleep(5), sleep(\"10ms\")]);",
      "    seen.push(i);",
      "  }",
      "  return { rounds: seen.length, sum: seen.reduce((a, b) => a + b, 0), random: Math.random() < 1 };",
      "}",
    ].join("\n");
    const started = await stack.request("POST", "/v1/runs", { script, input: { rounds: 30 } });
    const id = String(started.body.id);
    const done = await waitForRun(stack, id, 120_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual({ rounds: 30, sum: 435, random: true });

    // Several executions share the run's workflow id.
    const executions = [];
    for await (const execution of stack.client.workflow.list({ query: `WorkflowId = '${id}'` })) executions.push(execution);
    expect(executions.length).toBeGreaterThan(2);

    const journal = await stack.request("GET", `/v1/runs/${id}/journal?limit=1000`);
    const entries = journal.body["entries"] as { seq: number; tool: string; status: string }[];
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(entries.every((e) => e.tool === "rewind.sleep" && e.status === "completed")).toBe(true);
    expect((journal.body["completionOrder"] as number[]).slice().sort((a, b) => a - b)).toEqual(entries.map((e) => e.seq));
  }, 150_000);
});
