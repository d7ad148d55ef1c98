/**
 * The MCP front door used from the MCP Inspector's CLI (`@modelcontextprotocol/inspector-cli`), a
 * client nobody here wrote, one command per step as a person types them, against a real stack:
 * it lists the four tools and a run_script with a tool call completes; a run parked for approval
 * is answered parked with its id (the CLI's client declares no elicitation, so it can't be asked),
 * approved through the API's approve route, and get_run then answers it completed; and a run
 * started before the API restarted is read after it with get_run. The CLI has no task methods:
 * that last case is the path of clients without tasks, a run id and status in run_script's answer
 * and get_run later.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ECHO_SCRIPT, startFrontDoorStack, WAITING_SCRIPT, type FrontDoorStack } from "../helpers/front-door-stack.ts";
import { callTool, inspect } from "../helpers/inspector-cli.ts";
import { waitFor } from "../helpers/wait-for.ts";

let frontDoor: FrontDoorStack;

beforeAll(async () => {
  frontDoor = await startFrontDoorStack();
}, 120_000);

afterAll(async () => {
  await frontDoor?.stop();
});

type Answer = Record<string, unknown> & { structuredContent?: { runId?: string; status?: string } };

const call = (url: string, tool: string, args: Record<string, unknown>): Promise<Answer> =>
  callTool(url, frontDoor.key, tool, args);

describe("the MCP Inspector's CLI", () => {
  it("lists the four tools and runs a script whose tool call completes, for the end user named in the URL", async () => {
    const listed = (await inspect(frontDoor.urls.plain, frontDoor.key, ["--method", "tools/list"])) as {
      tools: { name: string }[];
    };
    expect(listed.tools.map((tool) => tool.name)).toEqual(["search_tools", "describe_tools", "run_script", "get_run"]);

    const url = `${frontDoor.urls.plain}?endUser=grace`;
    const answer = await call(url, "run_script", { script: ECHO_SCRIPT, input: { message: "inspector" } });
    expect(answer).toMatchObject({
      structuredContent: { status: "completed", result: { args: { message: "inspector" } } },
    });
    expect(answer["isError"]).toBeUndefined();
    const runId = String(answer.structuredContent?.runId);
    expect((await frontDoor.rest("GET", `/v1/runs/${runId}`)).body).toMatchObject({ endUser: "grace" });
  });

  it("answers a parked run with its id; once approved through the API, get_run answers it completed", async () => {
    const url = frontDoor.urls.gated;
    const parked = await call(url, "run_script", { script: ECHO_SCRIPT, input: { message: "gated" } });
    expect(parked.structuredContent).toMatchObject({
      status: "parked",
      waitingFor: ["call 1 tools.echo waits for approval"],
    });
    const runId = String(parked.structuredContent?.runId);
    expect((await call(url, "get_run", { runId })).structuredContent).toMatchObject({ status: "parked" });

    await frontDoor.approve(runId, 1);
    expect((await call(url, "get_run", { runId })).structuredContent).toMatchObject({
      runId,
      status: "completed",
      result: { args: { message: "gated" } },
    });
  });

  it("reads a run started before the API restarted with get_run after it (no tasks: the run id in run_script's answer)", async () => {
    const url = frontDoor.urls.plain;
    const started = await call(url, "run_script", { script: WAITING_SCRIPT });
    expect(started.structuredContent).toMatchObject({ status: "running" });
    const runId = String(started.structuredContent?.runId);

    await frontDoor.restartApi();
    await frontDoor.go(runId, "after restart");
    // Each get_run waits up to REWIND_MCP_WAIT_MS for the run to end, then answers it as it is.
    const ended = await waitFor(
      `get_run to answer run ${runId} ended after the restart`,
      () => call(url, "get_run", { runId }),
      { until: (answer) => answer.structuredContent?.status !== "running", timeoutMs: 30_000, intervalMs: 0 },
    );
    expect(ended.structuredContent).toMatchObject({
      runId,
      status: "completed",
      result: { args: { message: "after restart" } },
    });
  });
});
