/**
 * What a harness shows the model and what it gets back: the declarations of a registered
 * toolset in both renderings, and scripts that misuse its tools refused with a precise position.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";

let stack: RewindStack;
let github: TestMcpServer;
let toolset: string;

beforeAll(async () => {
  stack = await startRewindStack();
  github = await startMcpServer({
    tools: [
      {
        name: "create_issue",
        description: "Open an issue.",
        inputSchema: {
          type: "object",
          properties: {
            repo: { type: "string" },
            title: { type: "string" },
            labels: { type: "array", items: { type: "string" } },
          },
          required: ["repo", "title"],
        },
        outputSchema: { type: "object", properties: { number: { type: "integer" } }, required: ["number"] },
        handler: async () => ({ content: [], structuredContent: { number: 1 } }),
      },
    ],
  });
  const registered = await stack.request("POST", "/v1/toolsets", {
    mcpServers: { github: { url: github.url } },
    hostTools: {
      harness: {
        taskQueue: "h",
        tools: {
          ask_user: {
            description: "Ask the user a yes/no question.",
            inputSchema: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
          },
        },
      },
    },
  });
  toolset = String(registered.body.id);
});
afterAll(async () => {
  await github?.close();
  await stack?.stop();
});

describe("declarations", () => {
  it("renders the dts and the prompt from the pinned schemas", async () => {
    const dts = await fetch(`${stack.api.url}/v1/toolsets/${toolset}/declarations?format=dts`).then((r) => r.text());
    expect(dts).toContain('declare module "rewind:tools"');
    expect(dts).toContain(
      "create_issue(args: { repo: string; title: string; labels?: string[] }): Promise<{ number: number }>;",
    );
    expect(dts).toContain("export function sleep(");
    expect(dts).not.toContain("declare function fetch");
    const prompt = await fetch(`${stack.api.url}/v1/toolsets/${toolset}/declarations?format=prompt`).then((r) =>
      r.text(),
    );
    expect(prompt.split("\n")[0]).toMatch(/^import \{ github, harness, .* \} from "rewind:tools";$/);
    expect(prompt).toContain(
      "github.create_issue({ repo: string, title: string, labels?: string[] }) → { number: number } · Open an issue.",
    );
    expect(prompt).toContain("harness.ask_user({ question: string }) → unknown · Ask the user a yes/no question.");
    expect((await stack.request("GET", `/v1/toolsets/${toolset}/declarations?format=yaml`)).status).toBe(400);
  });
});

describe("type-checking scripts against a toolset", () => {
  const check = (body: string) =>
    stack.request("POST", "/v1/runs", {
      toolset,
      script: `import { github } from "rewind:tools";\nexport default async function main() {\n${body}\n}`,
    });

  it.each([
    ["an unknown tool", '  return github.delete_repo({ repo: "a" });', 3, 17, /Property 'delete_repo' does not exist/],
    [
      "a wrong argument type",
      '  return github.create_issue({ repo: 1, title: "t" });',
      3,
      32,
      /Type 'number' is not assignable to type 'string'/,
    ],
    [
      "a missing required argument",
      '  return github.create_issue({ repo: "a" });',
      3,
      30,
      /Property 'title' is missing/,
    ],
    [
      "an unknown property",
      '  return github.create_issue({ repo: "a", title: "t", body: "x" });',
      3,
      55,
      /'body' does not exist/,
    ],
    [
      "a wrong use of the result",
      '  const issue = await github.create_issue({ repo: "a", title: "t" });\n  return issue.url;',
      4,
      16,
      /Property 'url' does not exist/,
    ],
  ])("refuses %s with 422, line and column", async (_what, body, line, column, message) => {
    const { status, body: response } = await check(body);
    expect(status).toBe(422);
    expect(response.error?.details).toEqual([
      expect.objectContaining({ line, column, message: expect.stringMatching(message) }),
    ]);
  });

  it("accepts a correct script", async () => {
    const { status } = await check(
      '  const issue = await github.create_issue({ repo: "a", title: "t", labels: ["bug"] });\n  return issue.number;',
    );
    expect(status).toBe(201);
  });
});
