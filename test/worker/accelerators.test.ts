/**
 * REWIND_ACCELERATORS_OFF switches the speed mechanisms off one by one (or `all`): the names it
 * knows, what a wrong one gets, the sizes it sets to 0, and a stack with all of them off running
 * runs on the durable core alone (a local activity for every step) to the same
 * results as a stack with all of them on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCELERATORS, ConfigError, loadConfig, parseAccelerators } from "../../src/config.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { jitteredEchoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";

describe("REWIND_ACCELERATORS_OFF", () => {
  it("turns off the accelerators it names, all of them with all, none by default", () => {
    expect(Object.values(loadConfig({}).accelerators).every(Boolean)).toBe(true);
    const some = loadConfig({ REWIND_ACCELERATORS_OFF: " speculative-steps, spare-sessions ,eager-calls" });
    expect(some.accelerators).toMatchObject({
      "speculative-steps": false,
      "spare-sessions": false,
      "session-opener": true,
    });
    expect(some.eagerCalls).toBe(0);
    expect(some.spareSessionIdleMs).toBe(0);
    expect(loadConfig({ REWIND_ACCELERATORS_OFF: "eager-calls" }).spareSessionIdleMs).toBe(30_000);
    const none = loadConfig({ REWIND_ACCELERATORS_OFF: "all", REWIND_SPARE_SESSION_SECONDS: "9" });
    expect(Object.values(none.accelerators).some(Boolean)).toBe(false);
    expect(none.spareSessionIdleMs).toBe(0);
    expect(Object.keys(parseAccelerators(undefined))).toEqual([...ACCELERATORS]);
  });

  it("accepts the names of removed accelerators, switching nothing off", () => {
    const retired = loadConfig({ REWIND_ACCELERATORS_OFF: "session-queues,isolate-pool" });
    expect(Object.values(retired.accelerators).every(Boolean)).toBe(true);
    expect(loadConfig({ REWIND_ACCELERATORS_OFF: "isolate-pool,eager-calls" }).accelerators["eager-calls"]).toBe(false);
  });

  it("refuses a name it does not know, listing those it knows", () => {
    expect(() => loadConfig({ REWIND_ACCELERATORS_OFF: "speculative-steps,warp-drive" })).toThrow(ConfigError);
    expect(() => loadConfig({ REWIND_ACCELERATORS_OFF: "warp-drive" })).toThrow(
      `REWIND_ACCELERATORS_OFF: "warp-drive" is not an accelerator; the names are all, ${ACCELERATORS.join(", ")}`,
    );
  });
});

const SCRIPT = `import { svc } from "rewind:tools";
export default async function main() {
  let sum = 0;
  for (let i = 0; i < 6; i++) sum += ((await svc.echo({ i })) as { i: number }).i;
  const four = (await Promise.all([1, 2, 3, 4].map((i) => svc.echo({ i })))) as { i: number }[];
  for (const { i } of four) sum += i;
  return sum;
}`;

describe("a stack with every accelerator off", () => {
  let server: TestMcpServer;
  const stacks: RewindStack[] = [];
  beforeAll(async () => {
    server = await startMcpServer({ tools: [jitteredEchoTool()] });
  });
  afterAll(async () => {
    await Promise.all(stacks.map((stack) => stack.stop()));
    await server?.close();
  });

  /** The run's result and how many steps it took through the `advanceScript` local activity. */
  async function run(env: Record<string, string>) {
    const stack = await startRewindStack({ env });
    stacks.push(stack);
    const toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
    const id = await startRun(stack, { toolset, script: SCRIPT });
    const done = await waitForRun(stack, id, 60_000);
    const history = await stack.client.workflow.getHandle(id).fetchHistory();
    const localSteps = (history.events ?? []).filter(
      (event) => event.markerRecordedEventAttributes?.markerName === "core_local_activity",
    ).length;
    return { stack, done, localSteps };
  }

  it("runs on the durable core alone: every step a local activity, the same result", async () => {
    const off = await run({ REWIND_ACCELERATORS_OFF: "all" });
    expect(off.done.status, JSON.stringify(off.done.error)).toBe("completed");
    expect(off.done.result).toBe(25);
    // The first step, one for each of the six results, and at least one for the four together.
    expect(off.localSteps).toBeGreaterThanOrEqual(8);

    const on = await run({ REWIND_ACCELERATORS_OFF: "" });
    expect(on.done.status, JSON.stringify(on.done.error)).toBe("completed");
    expect(on.done.result).toBe(25);
    // The results came with their steps, taken where the isolate was: fewer local activities.
    expect(on.localSteps).toBeLessThan(off.localSteps);
  });
});
