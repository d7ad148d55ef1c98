/**
 * What a harness asks for to show a model a toolset, against a real stack: the prompt rendering
 * with the guide to writing a script before it (and the guide's claims about the sandbox, checked
 * by a run).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCRIPT_GUIDE } from "../../src/declarations/index.ts";
import { createApiClient } from "../../src/sdk/index.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";

let stack: RewindStack;
let server: TestMcpServer;
let toolset: string;

beforeAll(async () => {
  [stack, server] = await Promise.all([startRewindStack(), startMcpServer({ tools: [echoTool()] })]);
  toolset = await registerToolset(stack, { mcpServers: { tools: { url: server.url } } });
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
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
