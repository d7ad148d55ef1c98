/**
 * The MCP front door as the tools of a Pydantic AI agent (its `MCPToolset`, FastMCP's client;
 * test/fixtures/python/front_door_pydantic_agent.py), a client nobody here wrote, with a scripted
 * `FunctionModel` in place of an LLM, against a real stack: the agent's run_script with a tool
 * call completes; a run parked for approval is approved by the agent's elicitation handler and
 * completes; and a run started before the API restarted is read after it by the same conversation
 * with get_run. Pydantic AI has no MCP task path on a 2025-11-25 session with FastMCP 4 (see the
 * program's docstring): that last case is the path of clients without tasks.
 */
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ECHO_SCRIPT, startFrontDoorStack, WAITING_SCRIPT, type FrontDoorStack } from "../helpers/front-door-stack.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { ensurePydanticAi } from "../helpers/pydantic-ai.ts";
import { startPythonProgram, type PythonProgram } from "../helpers/python-program.ts";

const PROGRAM = path.join(REPO_ROOT, "test", "fixtures", "python", "front_door_pydantic_agent.py");

let frontDoor: FrontDoorStack;
let python: string;
const programs: PythonProgram[] = [];

beforeAll(async () => {
  [frontDoor, python] = await Promise.all([startFrontDoorStack(), ensurePydanticAi()]);
}, 120_000);

afterEach(async () => {
  await Promise.all(programs.splice(0).map((program) => program.stop()));
});

afterAll(async () => {
  await frontDoor?.stop();
});

function agent(scenario: string, url: string, runScriptArgs: unknown): PythonProgram {
  const args = [scenario, "--url", url, "--key", frontDoor.key, "--arguments", JSON.stringify(runScriptArgs)];
  const program = startPythonProgram(python, PROGRAM, args);
  programs.push(program);
  return program;
}

describe("a Pydantic AI agent", () => {
  it("sees the four tools and calls run_script, whose tool call completes", async () => {
    const program = agent("call", frontDoor.urls.plain, { script: ECHO_SCRIPT, input: { message: "agent" } });
    expect(await program.next("model-turn")).toMatchObject({
      tools: ["search_tools", "describe_tools", "run_script", "get_run"],
    });
    expect(await program.next("tool-return")).toMatchObject({
      tool: "run_script",
      content: { status: "completed", result: { args: { message: "agent" } } },
    });
    await program.next("output");
    await program.finished();
  });

  it("approves a parked call by answering the front door's elicitation, and the run completes", async () => {
    const program = agent("approve", frontDoor.urls.gated, { script: ECHO_SCRIPT, input: { message: "gated" } });
    expect((await program.next("asked"))["message"]).toMatch(
      /wants to call tools\.echo with \{"message":"gated"\}\. Approve this call\?/,
    );
    const returned = await program.next("tool-return");
    expect(returned).toMatchObject({
      tool: "run_script",
      content: { status: "completed", result: { args: { message: "gated" } } },
    });
    await program.finished();
    const runId = String((returned["content"] as { runId: string }).runId);
    expect((await frontDoor.journal(runId))[0]).toMatchObject({ approved: true, decidedBy: { decision: "approved" } });
  });

  it("reads a run started before the API restarted with get_run, in the same conversation after it", async () => {
    const program = agent("run-after-restart", frontDoor.urls.plain, { script: WAITING_SCRIPT });
    const started = await program.next("tool-return");
    expect(started).toMatchObject({ tool: "run_script", content: { status: "running" } });
    const runId = String((started["content"] as { runId: string }).runId);

    await program.next("waiting");
    await frontDoor.restartApi();
    await frontDoor.go(runId, "after restart");
    program.send("restarted");

    // The model asks get_run while the run is running, each call waiting up to REWIND_MCP_WAIT_MS.
    let read = await program.next("tool-return");
    while ((read["content"] as { status?: string }).status === "running") read = await program.next("tool-return");
    expect(read).toMatchObject({
      tool: "get_run",
      content: { runId, status: "completed", result: { args: { message: "after restart" } } },
    });
    await program.finished();
  });
});
