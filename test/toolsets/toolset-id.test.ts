/**
 * The content address: the same pinned document gives the same id whatever its key order and
 * whichever process computes it; any change to what is pinned gives another id.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { PinnedToolset } from "../../src/shared/toolset.ts";
import { canonicalJson, toolsetId } from "../../src/storage/toolset-id.ts";
import { REPO_ROOT } from "../helpers/paths.ts";

const document: PinnedToolset = {
  format: 1,
  mcpServers: {
    github: {
      url: "http://127.0.0.1:1/mcp",
      tools: [
        {
          name: "list_issues",
          description: "List issues.",
          inputSchema: { type: "object", properties: { repo: { type: "string" } }, required: ["repo"] },
        },
      ],
    },
  },
  hostTools: { harness: { taskQueue: "harness", tools: [{ name: "ask_user", inputSchema: { type: "object" } }] } },
  workflows: {},
  policies: { "github.list_issues": { onInterruption: "at_most_once", timeoutMs: 30_000 } },
};

function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reversedKeys(v)]),
  );
}

describe("toolset ids", () => {
  it("are ts_ and 64 hex digits, the same whatever the key order", () => {
    const id = toolsetId(document);
    expect(id).toMatch(/^ts_[0-9a-f]{64}$/);
    expect(JSON.stringify(reversedKeys(document))).not.toBe(JSON.stringify(document));
    expect(toolsetId(reversedKeys(document) as PinnedToolset)).toBe(id);
  });

  it("are the same when another process computes them", () => {
    const script = `import { toolsetId } from ${JSON.stringify(path.join(REPO_ROOT, "src/storage/toolset-id.ts"))};
process.stdout.write(toolsetId(JSON.parse(process.argv[1])));`;
    const other = execFileSync(
      process.execPath,
      [
        "--disable-warning=ExperimentalWarning",
        "--input-type=module",
        "-e",
        script,
        JSON.stringify(reversedKeys(document)),
      ],
      { encoding: "utf8" },
    );
    expect(other).toBe(toolsetId(document));
  });

  it("change with any pinned schema, policy or server", () => {
    const id = toolsetId(document);
    const variants: PinnedToolset[] = [
      { ...document, policies: { "github.list_issues": { onInterruption: "retry" } } },
      { ...document, mcpServers: { github: { ...document.mcpServers["github"]!, url: "http://127.0.0.1:2/mcp" } } },
      {
        ...document,
        mcpServers: {
          github: {
            ...document.mcpServers["github"]!,
            tools: [{ name: "list_issues", inputSchema: { type: "object" } }],
          },
        },
      },
      { ...document, http: { allowedHosts: ["api.github.com"] } },
    ];
    for (const variant of variants) expect(toolsetId(variant)).not.toBe(id);
  });

  it("use RFC 8785 canonical JSON (sorted keys, no whitespace, canonical numbers)", () => {
    expect(canonicalJson({ b: 1, a: [1e21, 0.1, "é"], c: { z: null, y: true } })).toBe(
      '{"a":[1e+21,0.1,"é"],"b":1,"c":{"y":true,"z":null}}',
    );
  });
});
