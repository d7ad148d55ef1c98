/**
 * How many stack frames the workflow code keeps (REWIND_WORKFLOW_STACK_FRAMES): none by default,
 * so Temporal's SDK takes no stack for each promise a run creates, and as many as asked while
 * debugging. Seen where an operator sees it: the stack-trace query of a run waiting for a signal
 * (Temporal's `__stack_trace`, the Web UI's "Stack Trace" tab), against a real worker and server.
 */
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_WORKFLOW_STACK_FRAMES, loadConfig } from "../../src/config.ts";
import { withStackFrames } from "../../src/worker/workflow-bundle.ts";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";
import { startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";

const WAITS =
  'import { waitForSignal } from "rewind:tools";\nexport default async () => { await waitForSignal("go"); return 1; }';

const stacks: RewindStack[] = [];
afterAll(async () => {
  await Promise.all(stacks.map((stack) => stack.stop()));
});

/** The stack-trace query's answer for a run of `stack` waiting for its signal. */
async function stackTraceOfWaitingRun(stack: RewindStack): Promise<string> {
  const id = await startRun(stack, { script: WAITS });
  await waitFor(
    "the run waiting for its signal",
    async () => (await stack.request("GET", `/v1/runs/${id}/journal`)).body,
    { until: (body) => JSON.stringify(body["entries"] ?? []).includes("rewind.waitForSignal") },
  );
  return stack.client.workflow.getHandle(id).query<string>("__stack_trace");
}

describe("REWIND_WORKFLOW_STACK_FRAMES", () => {
  it("defaults to no frames and takes a whole number up to 200", () => {
    expect(DEFAULT_WORKFLOW_STACK_FRAMES).toBe(0);
    expect(loadConfig({}).workflowStackFrames).toBe(0);
    expect(loadConfig({ REWIND_WORKFLOW_STACK_FRAMES: "10" }).workflowStackFrames).toBe(10);
    for (const value of ["-1", "201", "all", "2.5"])
      expect(() => loadConfig({ REWIND_WORKFLOW_STACK_FRAMES: value })).toThrow(ConfigError);
  });

  it("sets the limit ahead of the bundle's first line, so the source map's later lines stay right", () => {
    const code = "var a;\nvar b;";
    expect(withStackFrames(code, 0)).toBe("Error.stackTraceLimit = 0; var a;\nvar b;");
    expect(withStackFrames(code, 0).split("\n")).toHaveLength(2);
    expect(() => withStackFrames(code, -1)).toThrow(RangeError);
  });

  it("leaves a waiting run's stack trace empty by default, and shows the workflow's frames when asked", async () => {
    const quiet = await startRewindStack();
    stacks.push(quiet);
    const debugging = await startRewindStack({ env: { REWIND_WORKFLOW_STACK_FRAMES: "10" } });
    stacks.push(debugging);
    const without = await stackTraceOfWaitingRun(quiet);
    const withFrames = await stackTraceOfWaitingRun(debugging);
    // Each frame is a line "    at …"; with frames the run loop's own source shows, source-mapped.
    expect(without).not.toMatch(/^\s+at /m);
    expect(withFrames).toMatch(/^\s+at /m);
    expect(withFrames).toMatch(/src\/workflows\//);
  });
});
