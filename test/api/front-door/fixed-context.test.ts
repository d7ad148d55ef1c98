/**
 * What a model reads before it does anything, through a toolset's MCP server: the four tools'
 * definitions as `tools/list` answers them, counted in tokens (o200k_base) for a toolset of a
 * thousand tools served by real MCP servers. The figure is printed and recorded in docs/api.md;
 * the bound is the design's (about 1,000 tokens). The same toolset's tools are then found and
 * described through the front door, and a script calling one of them type-checks and runs.
 */
import { getEncoding } from "js-tiktoken";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectFrontDoor, frontDoorUrl, textOf } from "../../helpers/front-door-client.ts";
import { startGatewayServers, type GatewayServers } from "../../helpers/gateway-servers.ts";
import { gatewayTools, NEEDLES } from "../../helpers/large-toolset.ts";
import { startRewindStack, type RewindStack } from "../../helpers/rewind-stack.ts";
import { registerToolset } from "../../helpers/toolset.ts";

/** The design's bound on the front door's fixed context for a 1,000-tool toolset. */
const FIXED_CONTEXT_TOKENS = 1_000;

let stack: RewindStack;
let gateway: GatewayServers | undefined;
let large: string;
const FIXTURE = [...gatewayTools(), ...NEEDLES];

beforeAll(async () => {
  [stack, gateway] = await Promise.all([startRewindStack(), startGatewayServers(FIXTURE, 100)]);
  large = await registerToolset(stack, { mcpServers: gateway.mcpServers });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await gateway?.close();
});

describe("a toolset of a thousand tools through its MCP server", () => {
  it(`costs a model at most ${FIXED_CONTEXT_TOKENS} tokens of fixed context: the four tools as tools/list answers them`, async () => {
    const client = await connectFrontDoor(frontDoorUrl(stack.api.url, large));
    const { tools } = await client.client.listTools();
    await client.close();
    const encoding = getEncoding("o200k_base");
    const listed = JSON.stringify(tools);
    const tokens = encoding.encode(listed).length;
    const each = tools.map((t) => `${t.name} ${encoding.encode(JSON.stringify(t)).length}`).join(", ");
    console.info(
      `front door, ${FIXTURE.length} tools: tools/list is ${listed.length} characters, ${tokens} tokens (o200k_base; ${each})`,
    );
    expect(tokens).toBeLessThanOrEqual(FIXED_CONTEXT_TOKENS);
    const runScript = tools.find((t) => t.name === "run_script")?.description ?? "";
    expect(runScript).toContain(`${FIXTURE.length} tools in 16 groups`);
    expect(runScript).toContain("call search_tools, then describe_tools");
    expect(runScript).not.toContain("crm.list_contacts");
  });

  it("finds a tool among them, describes it, and runs a script that calls it", async () => {
    const client = await connectFrontDoor(frontDoorUrl(stack.api.url, large));
    const found = await client.call("search_tools", { query: "open a pull request", limit: 3 });
    expect(textOf(found).split("\n")[0]).toMatch(/^github\.create_pull_request · /);
    const described = await client.call("describe_tools", { names: ["github.create_pull_request"] });
    expect(textOf(described)).toContain("github.create_pull_request({ repo?: string, head?: string })");
    expect(textOf(described)).not.toContain("crm.");
    const ran = await client.call("run_script", {
      script:
        'import { github } from "rewind:tools";\n' +
        'export default async () => github.create_pull_request({ repo: "rewind", head: "frontdoor" });',
    });
    expect(ran.structuredContent).toMatchObject({
      status: "completed",
      result: { tool: "github.create_pull_request", args: { repo: "rewind", head: "frontdoor" } },
    });
    await client.close();
  });
});
