/**
 * What a model reads about servers it has never seen, from the reference servers themselves:
 * `server-everything` over streamable HTTP and `server-filesystem`, `server-sequential-thinking`
 * and `server-memory` in stdio behind supergateway. The prompt rendering must carry what a script
 * needs from their descriptions: the `[FILE]`/`[DIR]` marks `list_directory` answers with, the
 * unit of `trigger-long-running-operation`'s `duration`, that `read_file` is deprecated, and the
 * whole of sequential-thinking's guidance. The compact rendering stays one line a tool. Both
 * sizes are printed, for docs/mcp-support.md.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEverythingServer, type EverythingServer } from "../helpers/everything-server.ts";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";
import { startStdioGateway, type StdioGateway } from "../helpers/stdio-gateway.ts";
import { registerToolset } from "../helpers/toolset.ts";

const require = createRequire(import.meta.url);
const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
const stdioServer = (pkg: string, ...args: string[]) =>
  [process.execPath, require.resolve(`${pkg}/dist/index.js`), ...args].map(quote).join(" ");

let stack: RewindStack;
let everything: EverythingServer;
let gateways: StdioGateway[] = [];
let dir: string;
let toolset: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "rewind-prompt-"));
  await writeFile(path.join(dir, "notes.txt"), "hello");
  const memoryFile = path.join(dir, "memory.jsonl");
  [stack, everything, ...gateways] = await Promise.all([
    startRewindStack(),
    startEverythingServer(),
    startStdioGateway({ command: stdioServer("@modelcontextprotocol/server-filesystem", dir) }),
    startStdioGateway({
      command: `DISABLE_THOUGHT_LOGGING=true ${stdioServer("@modelcontextprotocol/server-sequential-thinking")}`,
    }),
    startStdioGateway({
      command: `MEMORY_FILE_PATH=${quote(memoryFile)} ${stdioServer("@modelcontextprotocol/server-memory")}`,
    }),
  ]);
  const [filesystem, thinking, memory] = gateways;
  toolset = await registerToolset(stack, {
    mcpServers: {
      everything: { url: everything.url },
      filesystem: { url: filesystem!.url },
      thinking: { url: thinking!.url },
      memory: { url: memory!.url },
    },
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await everything?.close();
  await Promise.all(gateways.map((gateway) => gateway.stop()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function rendering(query: string): Promise<string> {
  const response = await fetch(`${stack.api.url}/v1/toolsets/${toolset}/declarations?${query}`);
  expect(response.status).toBe(200);
  return response.text();
}

/** The prompt's text for one tool: its line and the indented lines under it. */
function toolText(prompt: string, reference: string): string {
  const lines = prompt.split("\n");
  const start = lines.findIndex((line) => line.startsWith(`${reference}(`));
  expect(start, `${reference} in the prompt`).toBeGreaterThanOrEqual(0);
  const end = lines.findIndex((line, i) => i > start && !line.startsWith("  "));
  return lines.slice(start, end).join("\n");
}

describe("the prompt of four reference servers", () => {
  it("carries what a script needs from each tool's description and its arguments'", async () => {
    const prompt = await rendering("format=prompt");
    expect(toolText(prompt, "filesystem.list_directory")).toMatch(/\[FILE\].*\[DIR\]/s);
    expect(toolText(prompt, "filesystem.read_file")).toMatch(/deprecated/i);
    expect(toolText(prompt, "filesystem.read_text_file")).toMatch(/\n {2}- head: /);
    expect(toolText(prompt, 'everything["trigger-long-running-operation"]')).toContain(
      "\n  - duration: Duration of the operation in seconds",
    );
    // Sequential thinking's guidance is long and in paragraphs and lists: all of it is there.
    const thinking = toolText(prompt, "thinking.sequentialthinking");
    expect(thinking.length).toBeGreaterThan(2_000);
    expect(thinking).toContain("  - nextThoughtNeeded: ");
    expect(toolText(prompt, "memory.create_entities")).toContain("  - entities[].name: ");
  });

  it("selected tools get the same full text; the compact rendering keeps one line a tool", async () => {
    const [prompt, compact, dts, selected] = await Promise.all([
      rendering("format=prompt"),
      rendering("format=prompt&compact=true"),
      rendering("format=dts"),
      rendering("format=prompt&tools=filesystem.list_directory"),
    ]);
    const toolLines = compact.split("\n").filter((line) => /^(everything|filesystem|thinking|memory)\b/.test(line));
    console.log(
      `[prompt sizes] four reference servers, ${toolLines.length} tools: prompt ${prompt.length} B, compact ${compact.length} B, .d.ts ${dts.length} B`,
    );
    expect(toolText(selected, "filesystem.list_directory")).toMatch(/\[DIR\]/);
    expect(toolLines.length).toBeGreaterThan(30);
    for (const line of toolLines) expect(line.length).toBeLessThan(200);
  });
});
