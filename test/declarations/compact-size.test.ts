/**
 * What the compact prompt rendering costs for a toolset of 1,000 tools: one line per tool, no
 * types, each line bounded, the whole far under the full renderings — and what a model is shown
 * of a few chosen tools is only those.
 */
import { describe, expect, it } from "vitest";
import { renderCompactPrompt, renderDts, renderPrompt } from "../../src/declarations/index.ts";
import { EMPTY_TOOLSET, listToolGroups, type PinnedToolset } from "../../src/shared/toolset.ts";
import { gatewayTools, type FixtureTool } from "../helpers/large-toolset.ts";

function toolsetOf(tools: FixtureTool[]): PinnedToolset {
  const mcpServers: PinnedToolset["mcpServers"] = {};
  for (const { group, name, description, inputSchema } of tools) {
    const server = (mcpServers[group] ??= { url: "http://127.0.0.1:9/mcp", tools: [] });
    server.tools.push({ name, description, inputSchema });
  }
  return { ...EMPTY_TOOLSET, mcpServers };
}

const tools = gatewayTools();
const toolset = toolsetOf(tools);
const bytes = (text: string) => Buffer.byteLength(text);

describe("the compact rendering of 1,000 tools", () => {
  const compact = renderCompactPrompt(toolset);
  const lines = compact.trimEnd().split("\n");

  it("has the import line, one line per tool with its qualified name and no types, then the built-ins", () => {
    expect(tools).toHaveLength(1_000);
    expect(lines[0]).toMatch(/^import \{ analytics, billing, .* ToolError \} from "rewind:tools";$/);
    const toolLines = lines.slice(1, 1_001);
    const names = listToolGroups(toolset).flatMap(({ group, tools: own }) => own.map((t) => `${group}.${t.name}`));
    expect(toolLines.map((line) => line.split(" · ")[0])).toEqual(names);
    for (const line of toolLines) {
      expect(line).not.toMatch(/[→({]/);
      // The qualified name, " · ", and a first sentence cut near 100 characters.
      expect(line.length).toBeLessThanOrEqual(line.indexOf(" · ") + 3 + 100);
    }
    expect(lines[1_001]).toMatch(/^sleep\(/);
  });

  it("is under 84 KB (about 84 bytes, some 20 tokens, a tool), under half the full .d.ts", () => {
    // At about 4 bytes a token, 84 KB is some 21,000 tokens; the tools' lines are 99% of it.
    expect(bytes(compact)).toBeLessThan(84_000);
    expect(bytes(compact)).toBeLessThan(bytes(renderPrompt(toolset)) * 0.7);
    expect(bytes(compact)).toBeLessThan(bytes(renderDts(toolset)) / 2);
  });

  it("grows by one line per tool: the prompt of three chosen tools is a few hundred bytes of tools", () => {
    const chosen = new Set(["crm.list_contacts", "billing.get_invoice", "support.create_ticket"]);
    const selected = renderPrompt(toolset, { tools: chosen });
    const builtins = renderPrompt(EMPTY_TOOLSET);
    expect(selected.split("\n")[0]).toBe(
      'import { billing, crm, support, sleep, waitForSignal, webhook, ToolError } from "rewind:tools";',
    );
    expect(selected.match(/^\w+\.\w+\(/gm)).toEqual([
      "billing.get_invoice(",
      "crm.list_contacts(",
      "support.create_ticket(",
    ]);
    expect(bytes(selected) - bytes(builtins)).toBeLessThan(900);
  });
});
