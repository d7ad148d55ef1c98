/**
 * What a harness asks for to show a model a toolset, against a real stack: the prompt rendering
 * with the guide to writing a script before it (and the guide's claims about the sandbox, checked
 * by a run); and for a toolset of a thousand tools served by MCP servers, the tools that match a
 * few words, the compact rendering, and the full declarations of chosen tools only — while runs
 * are still type-checked against every tool — with each bad request's answer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCRIPT_GUIDE } from "../../src/declarations/index.ts";
import { createApiClient, RewindApiError } from "../../src/sdk/index.ts";
import { startGatewayServers, type GatewayServers } from "../helpers/gateway-servers.ts";
import { gatewayTools, NEEDLES } from "../helpers/large-toolset.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";

let stack: RewindStack;
let server: TestMcpServer;
let toolset: string;
/** One MCP server per group of the large fixture, 1,009 tools in all. */
let gateway: GatewayServers | undefined;
let large: string;
const FIXTURE = [...gatewayTools(), ...NEEDLES];

/** A 400 badRequest whose problems name `field` (the query string is the assertion's label). */
async function expectRefused(url: string, field: string): Promise<void> {
  const label = url.slice(url.indexOf("?") + 1);
  const { status, body } = await stack.request("GET", url);
  expect([status, body.error?.code], label).toEqual([400, "badRequest"]);
  const problems = (body.error?.details as { problems: { path: string }[] }).problems;
  expect(
    problems.map((p) => p.path),
    label,
  ).toContain(field);
}

beforeAll(async () => {
  [stack, server, gateway] = await Promise.all([
    startRewindStack(),
    startMcpServer({ tools: [echoTool()] }),
    startGatewayServers(FIXTURE),
  ]);
  toolset = await registerToolset(stack, { mcpServers: { tools: { url: server.url } } });
  large = await registerToolset(stack, { mcpServers: gateway.mcpServers });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await server?.close();
  await gateway?.close();
});

const text = (route: string) =>
  fetch(`${stack.api.url}${route}`).then(async (r) => ({ status: r.status, text: await r.text() }));

describe("the guide to writing a script", () => {
  it("goes before the prompt rendering with guide=true, from the API and the SDK", async () => {
    const plain = await text(`/v1/toolsets/${toolset}/declarations?format=prompt`);
    const guided = await text(`/v1/toolsets/${toolset}/declarations?format=prompt&guide=true`);
    expect([plain.status, guided.status]).toEqual([200, 200]);
    expect(plain.text).not.toContain(SCRIPT_GUIDE);
    expect(guided.text).toBe(`${SCRIPT_GUIDE}\n${plain.text}`);
    expect((await text(`/v1/toolsets/${toolset}/declarations?format=prompt&guide=false`)).text).toBe(plain.text);
    const api = createApiClient({ url: stack.api.url });
    expect(await api.getDeclarations(toolset, "prompt", { guide: true })).toBe(guided.text);
    expect(await api.getDeclarations(toolset, "prompt")).toBe(plain.text);
  });

  it("is refused with the .d.ts, or with a value other than true or false", async () => {
    for (const query of ["format=dts&guide=true", "guide=true", "format=prompt&guide=yes"]) {
      const { status, body } = await stack.request("GET", `/v1/toolsets/${toolset}/declarations?${query}`);
      expect([status, body.error?.code], query).toEqual([400, "badRequest"]);
      expect(body.error?.message, query).toContain("guide");
    }
  });

  it("says what the sandbox has: no timers, process or require, and no module but rewind:tools", async () => {
    const script = `import { tools } from "rewind:tools";
export default async function main(input: { message: string }) {
  const scope = globalThis as unknown as Record<string, unknown>;
  const echoed = await tools.echo({ message: input.message });
  return { absent: ["setTimeout", "setInterval", "process", "require"].filter((name) => scope[name] === undefined), echoed: echoed !== undefined };
}`;
    const id = await startRun(stack, { script, toolset, input: { message: "hi" } });
    const done = await waitForRun(stack, id);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual({ absent: ["setTimeout", "setInterval", "process", "require"], echoed: true });
    const refused = await stack.request("POST", "/v1/runs", {
      toolset,
      script:
        'import { readFileSync } from "node:fs";\nexport default async () => readFileSync("/etc/hostname", "utf8");',
    });
    expect([refused.status, refused.body.error?.code]).toEqual([422, "typeCheckFailed"]);
  });
});

describe("GET /v1/toolsets/{id}/tools: the tools that match a few words", () => {
  it("ranks the right tool of a thousand first, and answers its compact line", async () => {
    const { status, body } = await stack.request(
      "GET",
      `/v1/toolsets/${large}/tools?query=${encodeURIComponent("open a pull request")}`,
    );
    expect(status).toBe(200);
    const tools = body["tools"] as { name: string; line: string; score: number }[];
    expect(tools[0]).toEqual({
      name: "github.create_pull_request",
      line: "github.create_pull_request · Open a pull request from a branch of a repository.",
      score: expect.any(Number) as number,
    });
    expect(tools.length).toBeLessThanOrEqual(10);
    for (const [i, tool] of tools.entries())
      if (i > 0) expect(tool.score).toBeLessThanOrEqual(tools[i - 1]?.score ?? 0);
    const limited = await stack.request("GET", `/v1/toolsets/${large}/tools?query=invoice&limit=3`);
    expect((limited.body["tools"] as { name: string }[]).map((t) => t.name)).toHaveLength(3);
    const none = await stack.request("GET", `/v1/toolsets/${large}/tools?query=zyxwv`);
    expect([none.status, none.body]).toEqual([200, { tools: [] }]);
  });

  it("answers the same through the SDK", async () => {
    const api = createApiClient({ url: stack.api.url });
    const found = await api.searchTools(large, "will it rain in Paris tomorrow", { limit: 1 });
    expect(found.tools.map((t) => t.name)).toEqual(["weather.get_forecast"]);
  });

  it("refuses a missing or empty query, a bad limit or an unknown parameter (400), an unknown toolset (404)", async () => {
    for (const [query, field] of [
      ["", "query"],
      ["query=", "query"],
      ["query=%20%20", "query"],
      ["query=issues&limit=0", "limit"],
      ["query=issues&limit=101", "limit"],
      ["query=issues&limit=ten", "limit"],
      ["query=issues&sort=score", "(root)"],
      [`query=${"x".repeat(501)}`, "query"],
    ] as const) {
      await expectRefused(`/v1/toolsets/${large}/tools?${query}`, field);
    }
    for (const id of [`ts_${"0".repeat(64)}`, "not-a-toolset"]) {
      const { status, body } = await stack.request("GET", `/v1/toolsets/${id}/tools?query=issues`);
      expect([status, body.error?.code]).toEqual([404, "notFound"]);
    }
  });
});

describe("the compact rendering and chosen tools", () => {
  it("renders one line per tool, no types, with the import line and the built-ins", async () => {
    const compact = await text(`/v1/toolsets/${large}/declarations?format=prompt&compact=true`);
    expect(compact.status).toBe(200);
    const lines = compact.text.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^import \{ analytics, billing, calendar, .* ToolError \} from "rewind:tools";$/);
    const toolLines = lines.filter((line) => /^\w+(\.\w+|\["[^"]+"\])( · |$)/.test(line));
    expect(toolLines).toHaveLength(FIXTURE.length);
    expect(toolLines).toContain('slack["add-reaction"] · Add an emoji reaction to a message.');
    expect(compact.text).not.toContain("inventory.list_items({");
    expect(lines.at(-1)).toMatch(/^ToolError \{/);
    const full = await text(`/v1/toolsets/${large}/declarations?format=prompt`);
    expect(Buffer.byteLength(compact.text)).toBeLessThan(Buffer.byteLength(full.text) * 0.7);
    const guided = await text(`/v1/toolsets/${large}/declarations?format=prompt&compact=true&guide=true`);
    expect(guided.text).toBe(`${SCRIPT_GUIDE}\n${compact.text}`);
  });

  it("renders the full declarations of the chosen tools only, for the prompt and the .d.ts", async () => {
    const chosen = "github.listIssues,slack.add-reaction,hr.get_employee";
    const prompt = await text(`/v1/toolsets/${large}/declarations?format=prompt&tools=${chosen}`);
    expect(prompt.status).toBe(200);
    expect(prompt.text.split("\n")[0]).toBe(
      'import { github, hr, slack, sleep, waitForSignal, webhook, ToolError } from "rewind:tools";',
    );
    expect(prompt.text.match(/^(github|hr|slack)\S+\(\{/gm)).toEqual([
      "github.listIssues({",
      "hr.get_employee({",
      'slack["add-reaction"]({',
    ]);
    expect(prompt.text).toContain("github.listIssues({ repo?: string }) → unknown · List the issues of a repository");
    expect(prompt.text).not.toContain("crm.");
    const dts = await text(`/v1/toolsets/${large}/declarations?format=dts&tools=${chosen}`);
    expect(dts.text.match(/^ {4}("[^"]+"|\w+)\(args/gm)).toEqual([
      "    listIssues(args",
      "    get_employee(args",
      '    "add-reaction"(args',
    ]);
    const api = createApiClient({ url: stack.api.url });
    expect(await api.getDeclarations(large, "prompt", { tools: chosen.split(",") })).toBe(prompt.text);
    expect(await api.getDeclarations(large, "prompt", { compact: true })).toContain("\nhr.get_employee · Gets one");
  });

  it("still type-checks runs against every tool of the toolset", async () => {
    await text(`/v1/toolsets/${large}/declarations?format=dts&tools=github.listIssues`);
    const script = `import { crm, weather } from "rewind:tools";
export default async function main() {
  const forecast = await weather.get_forecast({ city: "Paris" });
  const contact = await crm.get_contact({ id: "c1" });
  return [forecast, contact];
}`;
    const id = await startRun(stack, { script, toolset: large });
    const done = await waitForRun(stack, id);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual([
      { tool: "weather.get_forecast", args: { city: "Paris" } },
      { tool: "crm.get_contact", args: { id: "c1" } },
    ]);
    const misuse = await stack.request("POST", "/v1/runs", {
      toolset: large,
      script: 'import { weather } from "rewind:tools";\nexport default async () => weather.get_forecast({});',
    });
    expect([misuse.status, misuse.body.error?.code]).toEqual([422, "typeCheckFailed"]);
  });

  it("answers 400 naming every unknown tool, and for compact or tools where they do not apply", async () => {
    const unknown = await stack.request(
      "GET",
      `/v1/toolsets/${large}/declarations?format=prompt&tools=github.listIssues,github.nope,nope.x,github.nope`,
    );
    expect([unknown.status, unknown.body.error?.code]).toEqual([400, "badRequest"]);
    expect(unknown.body.error?.details).toEqual({ unknownTools: ["github.nope", "nope.x"] });
    expect(unknown.body.error?.message).toContain("github.nope, nope.x");
    for (const [query, field] of [
      ["format=dts&compact=true", "compact"],
      ["format=prompt&compact=true&tools=github.listIssues", "tools"],
      ["format=prompt&tools=", "tools"],
      ["format=prompt&tools=,,", "tools"],
      ["format=prompt&compact=1", "compact"],
      [`format=prompt&tools=${Array.from({ length: 201 }, (_, i) => `g.t${i}`).join(",")}`, "tools"],
    ] as const) {
      await expectRefused(`/v1/toolsets/${large}/declarations?${query}`, field);
    }
    const missing = await stack.request("GET", `/v1/toolsets/ts_${"0".repeat(64)}/declarations?tools=a.b`);
    expect([missing.status, missing.body.error?.code]).toEqual([404, "notFound"]);
    const api = createApiClient({ url: stack.api.url });
    const error = await api.getDeclarations(large, "dts", { tools: ["weather.nope"] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RewindApiError);
    expect(error).toMatchObject({ status: 400, code: "badRequest", details: { unknownTools: ["weather.nope"] } });
  });
});
