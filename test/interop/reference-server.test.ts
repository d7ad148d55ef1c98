/**
 * Interop with the reference MCP server, `server-everything` over streamable HTTP: a toolset
 * registered with it, then one Rewind run per tool it lists — every tool a client can call
 * without answering the server's own requests — and what each script got checked against the
 * tool's outputSchema, or, lacking one, recorded as a JSON type.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEverythingServer, type EverythingServer } from "../helpers/everything-server.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { callInRun, jsonType, pinnedTools, schemaMismatch, type PinnedToolView } from "./interop-runs.ts";
import { waitFor } from "../helpers/wait-for.ts";

/**
 * Tools not called in the sweep, and why. The server lists only the tools whose client
 * capabilities Rewind declared (roots, form elicitation), so most of these are never listed;
 * the form elicitation has a test of its own, where the harness answers through the API.
 */
const SKIPPED: Record<string, string> = {
  "trigger-elicitation-request": "waits for the harness's answer: its own test below",
  "trigger-url-elicitation": "sends elicitation/create (url) to the client",
  "trigger-sampling-request": "sends sampling/createMessage to the client",
  "trigger-sampling-request-async": "has the client run sampling as a task",
  "trigger-elicitation-request-async": "has the client run an elicitation as a task",
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
  "gzip-file-as-resource": {
    name: "hello.txt.gz",
    data: "data:text/plain;base64,aGVsbG8gaW50ZXJvcA==",
    outputType: "resource",
  },
  "trigger-long-running-operation": { duration: 0.2, steps: 2 },
  "simulate-research-query": { topic: "interop" },
};

/** What scripts get from the tools that declare no outputSchema (see resultValue). */
const OBSERVED_TYPES: Record<string, string> = {
  echo: "string",
  "get-annotated-message": "array",
  "get-env": "object",
  "get-resource-links": "array",
  "get-resource-reference": "array",
  "get-roots-list": "string",
  "get-sum": "string",
  "get-tiny-image": "array",
  "gzip-file-as-resource": "array",
  "simulate-research-query": "string",
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

const isSkipped = (tool: PinnedToolView) => tool.name in SKIPPED;

describe("server-everything over streamable HTTP", () => {
  it("pins its tools, and every one skipped is skipped for a reason given here", () => {
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "get-structured-content", "get-sum"]));
    for (const tool of tools.filter(isSkipped))
      expect(SKIPPED, `${tool.name} is skipped without a reason`).toHaveProperty([tool.name]);
  });

  it("calls every other tool it lists from a run (roots answered, tasks waited for); results match the outputSchema or are JSON", async () => {
    const callable = tools.filter((tool) => !isSkipped(tool));
    const outcomes = await Promise.all(
      callable.map(async (tool) => ({
        tool,
        done: await callInRun(stack, toolset, "everything", tool.name, ARGUMENTS[tool.name] ?? {}),
      })),
    );
    const observed: Record<string, string> = {};
    for (const { tool, done } of outcomes) {
      expect.soft(done.status, `${tool.name}: ${JSON.stringify(done.error)}`).toBe("completed");
      if (done.status !== "completed") continue;
      if (tool.outputSchema) {
        expect
          .soft(schemaMismatch(tool.outputSchema, done.result), `${tool.name}: ${JSON.stringify(done.result)}`)
          .toBeUndefined();
      } else {
        observed[tool.name] = jsonType(done.result);
      }
    }
    expect(callable.filter((t) => t.outputSchema).map((t) => t.name)).toContain("get-structured-content");
    expect(observed).toEqual(
      Object.fromEntries(
        callable.filter((t) => !t.outputSchema).map((t) => [t.name, OBSERVED_TYPES[t.name] ?? "unrecorded"]),
      ),
    );
  });

  it("lists the tools of the capabilities Rewind declares, and a task tool", () => {
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["get-roots-list", "trigger-elicitation-request", "simulate-research-query"]),
    );
  });

  it("parks a run on the server's form until the harness answers it through the API", async () => {
    const id = await startRun(stack, {
      toolset,
      script: `import { everything } from "rewind:tools";\nexport default async function main() { return await everything["trigger-elicitation-request"]({}); }`,
    });
    await waitFor(`run ${id} to park`, async () => (await stack.request("GET", `/v1/runs/${id}`)).body.status, {
      timeoutMs: 15_000,
      until: (status) => status === "parked",
    });
    const { body } = await stack.request("GET", `/v1/runs/${id}/journal`);
    const asked = (
      body as {
        entries?: { inputs?: { requestedSchema: { properties?: Record<string, unknown>; required?: string[] } }[] }[];
      }
    ).entries?.[0]?.inputs?.[0]?.requestedSchema;
    expect(asked?.properties).toBeDefined();
    // A content that fits the server's schema: its required fields, each of its declared type.
    const content = Object.fromEntries(
      (asked?.required ?? []).map((name) => {
        const field = asked?.properties?.[name] as { type?: string; enum?: unknown[]; default?: unknown } | undefined;
        const value =
          field?.default ??
          field?.enum?.[0] ??
          (field?.type === "boolean"
            ? true
            : field?.type === "number" || field?.type === "integer"
              ? 1
              : field?.type === "array"
                ? []
                : "interop");
        return [name, value];
      }),
    );
    const answered = await stack.request("POST", `/v1/runs/${id}/calls/1/elicitation`, { action: "accept", content });
    expect(answered.status, JSON.stringify(answered.body)).toBeLessThan(300);
    const done = await waitForRun(stack, id, 30_000);
    expect(done.status).toBe("completed");
    expect(JSON.stringify(done.result)).toMatch(/accept/i);
  }, 60_000);

  it("gives scripts the values they expect from the tools everyone uses", async () => {
    const echo = await callInRun(stack, toolset, "everything", "echo", { message: "hello" });
    expect(echo.result).toBe("Echo: hello");
    const weather = await callInRun(stack, toolset, "everything", "get-structured-content", { location: "Chicago" });
    expect(weather.result).toMatchObject({
      temperature: expect.any(Number),
      conditions: expect.any(String),
      humidity: expect.any(Number),
    });
  });
});
