/**
 * Interop with the reference MCP server, `server-everything` over streamable HTTP: a toolset
 * registered with it, then one Rewind run per tool it lists — every tool a client can call
 * without answering the server's own requests — and what each script got checked against the
 * tool's outputSchema, or, lacking one, recorded as a JSON type.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEverythingServer, type EverythingServer } from "../helpers/everything-server.ts";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset } from "../helpers/toolset.ts";
import { callInRun, jsonType, pinnedTools, schemaMismatch, type PinnedToolView } from "./interop-runs.ts";

/**
 * Tools not called, and why: each needs the client to answer a request of the server's (or to run
 * tasks), which this part of the suite does not cover. Which of them are listed depends on the
 * capabilities the client declared when it registered the toolset.
 */
const SKIPPED: Record<string, string> = {
  "get-roots-list": "sends roots/list to the client",
  "trigger-elicitation-request": "sends elicitation/create (form) to the client",
  "trigger-url-elicitation": "sends elicitation/create (url) to the client",
  "trigger-sampling-request": "sends sampling/createMessage to the client",
  "trigger-sampling-request-async": "has the client run sampling as a task",
  "trigger-elicitation-request-async": "has the client run an elicitation as a task",
  "simulate-research-query": "a task tool (execution.taskSupport: required)",
};

/** Valid arguments of the tools that need some; the rest are called with `{}`. */
const ARGUMENTS: Record<string, Record<string, unknown>> = {
  echo: { message: "interop" },
  "get-annotated-message": { messageType: "success", includeImage: true },
  "get-resource-links": { count: 2 },
  "get-resource-reference": { resourceType: "Text", resourceId: 1 },
  "get-structured-content": { location: "Chicago" },
  "get-sum": { a: 2, b: 3 },
  // A data: URI, so the server fetches nothing off this machine.
  "gzip-file-as-resource": { name: "hello.txt.gz", data: "data:text/plain;base64,aGVsbG8gaW50ZXJvcA==", outputType: "resource" },
  "trigger-long-running-operation": { duration: 0.2, steps: 2 },
};

/** What scripts get from the tools that declare no outputSchema (see resultValue). */
const OBSERVED_TYPES: Record<string, string> = {
  echo: "string",
  "get-annotated-message": "array",
  "get-env": "object",
  "get-resource-links": "array",
  "get-resource-reference": "array",
  "get-sum": "string",
  "get-tiny-image": "array",
  "gzip-file-as-resource": "array",
  "toggle-simulated-logging": "string",
  "toggle-subscriber-updates": "string",
  "trigger-long-running-operation": "string",
};

let stack: RewindStack;
let server: EverythingServer;
let toolset: string;
let tools: PinnedToolView[];

beforeAll(async () => {
  [stack, server] = await Promise.all([startRewindStack(), startEverythingServer()]);
  toolset = await registerToolset(stack, { mcpServers: { everything: { url: server.url } } });
  tools = await pinnedTools(stack, toolset, "everything");
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

const isSkipped = (tool: PinnedToolView) => tool.name in SKIPPED || tool.execution?.taskSupport === "required";

describe("server-everything over streamable HTTP", () => {
  it("pins its tools, and every one skipped is skipped for a reason given here", () => {
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "get-structured-content", "get-sum"]));
    for (const tool of tools.filter(isSkipped)) expect(SKIPPED, `${tool.name} is skipped without a reason`).toHaveProperty([tool.name]);
  });

  it("calls every tool that needs no client capability from a run; results match the outputSchema or are JSON", async () => {
    const callable = tools.filter((tool) => !isSkipped(tool));
    const outcomes = await Promise.all(callable.map(async (tool) => ({ tool, done: await callInRun(stack, toolset, "everything", tool.name, ARGUMENTS[tool.name] ?? {}) })));
    const observed: Record<string, string> = {};
    for (const { tool, done } of outcomes) {
      expect.soft(done.status, `${tool.name}: ${JSON.stringify(done.error)}`).toBe("completed");
      if (done.status !== "completed") continue;
      if (tool.outputSchema) {
        expect.soft(schemaMismatch(tool.outputSchema, done.result), `${tool.name}: ${JSON.stringify(done.result)}`).toBeUndefined();
      } else {
        observed[tool.name] = jsonType(done.result);
      }
    }
    expect(callable.filter((t) => t.outputSchema).map((t) => t.name)).toContain("get-structured-content");
    expect(observed).toEqual(Object.fromEntries(callable.filter((t) => !t.outputSchema).map((t) => [t.name, OBSERVED_TYPES[t.name] ?? "unrecorded"])));
  });

  it("gives scripts the values they expect from the tools everyone uses", async () => {
    const echo = await callInRun(stack, toolset, "everything", "echo", { message: "hello" });
    expect(echo.result).toBe("Echo: hello");
    const weather = await callInRun(stack, toolset, "everything", "get-structured-content", { location: "Chicago" });
    expect(weather.result).toMatchObject({ temperature: expect.any(Number), conditions: expect.any(String), humidity: expect.any(Number) });
  });
});
