/**
 * The MCP front door used by an application written with the official Python SDK (`mcp` 2.3.0,
 * test/fixtures/python/front_door_mcp_client.py), a client nobody here wrote, against a real
 * stack: a run with a tool call completes; a run parked for approval is approved by the
 * application's user through the SDK's elicitation callback and completes; and a run started
 * before the API restarted is read after it, as an MCP task (tasks/get, tasks/result) on a new
 * session, and with get_run. The SDK has no client task API (see the program's docstring), so the
 * run is started by a plain run_script call and its task read by the run's id.
 */
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ECHO_SCRIPT, startFrontDoorStack, WAITING_SCRIPT, type FrontDoorStack } from "../helpers/front-door-stack.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { ensurePythonMcp } from "../helpers/python-mcp.ts";
import { startPythonProgram, type PythonProgram } from "../helpers/python-program.ts";

const PROGRAM = path.join(REPO_ROOT, "test", "fixtures", "python", "front_door_mcp_client.py");
const RELATED_TASK = "io.modelcontextprotocol/related-task";

let frontDoor: FrontDoorStack;
let python: string;
const programs: PythonProgram[] = [];

beforeAll(async () => {
  [frontDoor, python] = await Promise.all([startFrontDoorStack(), ensurePythonMcp()]);
}, 120_000);

afterEach(async () => {
  await Promise.all(programs.splice(0).map((program) => program.stop()));
});

afterAll(async () => {
  await frontDoor?.stop();
});

function client(scenario: string, url: string, runScriptArgs: unknown, extra: string[] = []): PythonProgram {
  const program = startPythonProgram(python, PROGRAM, [
    scenario,
    "--url",
    url,
    "--key",
    frontDoor.key,
    "--arguments",
    JSON.stringify(runScriptArgs),
    ...extra,
  ]);
  programs.push(program);
  return program;
}

describe("the official Python MCP SDK", () => {
  it("lists the four tools and runs a script whose tool call completes, for the end user it names", async () => {
    const program = client("call", frontDoor.urls.plain, { script: ECHO_SCRIPT, input: { message: "py" } }, [
      "--end-user",
      "ada",
    ]);
    expect(await program.next("tools")).toMatchObject({
      names: ["search_tools", "describe_tools", "run_script", "get_run"],
      protocolVersion: "2025-11-25",
    });
    const answer = await program.next("answer");
    expect(answer).toMatchObject({
      isError: false,
      structured: { status: "completed", result: { args: { message: "py" } } },
    });
    await program.finished();
    const runId = String((answer["structured"] as { runId: string }).runId);
    expect((await frontDoor.rest("GET", `/v1/runs/${runId}`)).body).toMatchObject({ endUser: "ada" });
  });

  it("approves a parked call by answering the front door's elicitation, and the run completes", async () => {
    const program = client("approve", frontDoor.urls.gated, { script: ECHO_SCRIPT, input: { message: "gated" } });
    const asked = await program.next("asked");
    expect(asked["message"]).toMatch(/wants to call tools\.echo with \{"message":"gated"\}\. Approve this call\?/);
    const answer = await program.next("answer");
    expect(answer).toMatchObject({
      isError: false,
      structured: { status: "completed", result: { args: { message: "gated" } } },
    });
    await program.finished();
    const runId = String((answer["structured"] as { runId: string }).runId);
    expect((await frontDoor.journal(runId))[0]).toMatchObject({
      approved: true,
      decidedBy: { principal: expect.stringMatching(new RegExp(`^${frontDoor.namespace}/key-`)), decision: "approved" },
    });
  });

  it("reads a run started before the API restarted as a task on a new session: tasks/get, tasks/result, get_run", async () => {
    const program = client("task-after-restart", frontDoor.urls.plain, { script: WAITING_SCRIPT });
    const started = await program.next("answer");
    expect(started).toMatchObject({ isError: false, structured: { status: "running" } });
    const runId = String((started["structured"] as { runId: string }).runId);
    expect(started["text"]).toContain(`Call get_run({"runId":"${runId}"}) later`);

    await program.next("waiting");
    await frontDoor.restartApi();
    program.send("restarted");

    expect(await program.next("task")).toMatchObject({ taskId: runId, status: "working" });
    // tasks/result waits for the run's end, which the signal brings.
    await frontDoor.go(runId, "after restart");
    expect(await program.next("task-result")).toMatchObject({
      isError: false,
      structured: { runId, status: "completed", result: { args: { message: "after restart" } } },
      meta: { [RELATED_TASK]: { taskId: runId } },
    });
    expect(await program.next("get-run")).toMatchObject({ structured: { runId, status: "completed" } });
    await program.finished();
  });
});
