/**
 * What a model reads about servers it has never seen, from the servers themselves:
 * `server-everything` over streamable HTTP, `server-filesystem`, `server-sequential-thinking` and
 * `server-memory` in stdio behind supergateway, the Python `mcp-server-time`, `mcp-server-git` and
 * `mcp-server-sqlite` behind mcp-proxy, and a notes server written with FastMCP. The prompt
 * rendering must carry what a script needs from their descriptions: the `[FILE]`/`[DIR]` marks
 * `list_directory` answers with, the unit of `trigger-long-running-operation`'s `duration`, that
 * `read_file` is deprecated, the whole of sequential-thinking's guidance, the IANA names and
 * `HH:MM` form the time tools take, the timestamp forms `git_log` accepts, the SQL each sqlite
 * tool takes, and what FastMCP made of a docstring, `Field` descriptions, bounds and defaults
 * (`limit`: 1–50, default 10), and a list result. A script calls sqlite and the FastMCP server.
 * The compact rendering stays one line a tool. The sizes are printed, for docs/api.md.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEverythingServer, type EverythingServer } from "../helpers/everything-server.ts";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";
import { startStdioGateway, type StdioGateway } from "../helpers/stdio-gateway.ts";
import { startProxiedServer, type ProxiedServer } from "../helpers/python-reference-servers.ts";
import { startFastMcpServer } from "../helpers/fastmcp-server.ts";
import { execFileSync } from "node:child_process";
import { registerToolset } from "../helpers/toolset.ts";
import { callInRun } from "./interop-runs.ts";

const require = createRequire(import.meta.url);
const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
const stdioServer = (pkg: string, ...args: string[]) =>
  [process.execPath, require.resolve(`${pkg}/dist/index.js`), ...args].map(quote).join(" ");

let stack: RewindStack;
let everything: EverythingServer;
let gateways: StdioGateway[] = [];
let proxied: ProxiedServer[] = [];
let dir: string;
let toolset: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "rewind-prompt-"));
  await writeFile(path.join(dir, "notes.txt"), "hello");
  const memoryFile = path.join(dir, "memory.jsonl");
  const repository = path.join(dir, "repository");
  execFileSync("git", ["init", "-q", repository]);
  const database = path.join(dir, "shop.db");
  proxied = await Promise.all([
    startProxiedServer("time"),
    startProxiedServer("git", ["--repository", repository]),
    startProxiedServer("sqlite", ["--db-path", database]),
    startFastMcpServer(),
  ]);
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
      time: { url: proxied[0]!.url },
      git: { url: proxied[1]!.url },
      sqlite: { url: proxied[2]!.url },
      notes: { url: proxied[3]!.url },
    },
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await everything?.close();
  await Promise.all([...gateways, ...proxied].map((server) => server.stop()));
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

describe("the prompt of eight third-party servers", () => {
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
    // The Python servers put what a call needs in their arguments' descriptions.
    expect(toolText(prompt, "time.get_current_time")).toMatch(
      /\n {2}- timezone: IANA timezone name \(e\.g\., 'America\/New_York'/,
    );
    expect(toolText(prompt, "time.convert_time")).toContain("  - time: Time to convert in 24-hour format (HH:MM)");
    expect(toolText(prompt, "git.git_log")).toMatch(
      /\n {2}- start_timestamp: Start timestamp for filtering commits\. .*ISO 8601/s,
    );
    expect(toolText(prompt, "sqlite.read_query")).toContain("  - query: SELECT SQL query to execute");
    // FastMCP: the docstring's paragraphs, each Field's description, its bounds and the defaults,
    // a list result wrapped in `result`.
    const search = toolText(prompt, "notes.search_notes");
    expect(search).toContain("Every word of the query must appear in the note's title or body.");
    expect(search).toContain("  - query: Words to look for in titles and bodies (case-insensitive)");
    expect(search).toContain("  - limit: At most this many notes (1–50, default 10)");
    expect(search).toContain('  - order: (default "newest")');
    expect(search).toMatch(/order\?: "newest" \| "oldest" \}\) → \{ result: \{ id: number, /);
    expect(toolText(prompt, "notes.add_note")).toContain("  - title: A short title (at most 120 characters)");
  });

  it("a script calls sqlite and the FastMCP server", async () => {
    const created = await callInRun(stack, toolset, "sqlite", "create_table", {
      query: "CREATE TABLE products (sku TEXT PRIMARY KEY, stock INTEGER)",
    });
    expect(created.status, JSON.stringify(created)).toBe("completed");
    const note = await callInRun(stack, toolset, "notes", "add_note", { title: "Restock", body: "Order widgets" });
    expect(note.status, JSON.stringify(note)).toBe("completed");
    expect(note.result).toMatchObject({ id: 1, title: "Restock", tags: [] });
  });

  it("selected tools get the same full text; the compact rendering keeps one line a tool", async () => {
    const [prompt, compact, dts, selected] = await Promise.all([
      rendering("format=prompt"),
      rendering("format=prompt&compact=true"),
      rendering("format=dts"),
      rendering("format=prompt&tools=filesystem.list_directory"),
    ]);
    const toolLines = compact
      .split("\n")
      .filter((line) => /^(everything|filesystem|thinking|memory|time|git|sqlite|notes)\b/.test(line));
    const bytes = (text: string) => Buffer.byteLength(text);
    console.log(
      `[prompt sizes] eight third-party servers, ${toolLines.length} tools: prompt ${bytes(prompt)} B, compact ${bytes(compact)} B, .d.ts ${bytes(dts)} B`,
    );
    expect(toolText(selected, "filesystem.list_directory")).toMatch(/\[DIR\]/);
    // The .d.ts says FastMCP's bounds as JSDoc tags, where editors show them.
    expect(dts).toMatch(
      /\* At most this many notes\n\s+\* @minimum 1\n\s+\* @maximum 50\n\s+\* @default 10\n\s+\*\/\n\s+limit\?: number;/,
    );
    expect(dts).toMatch(/\* @maxLength 120\n\s+\*\/\n\s+title: string;/);
    expect(toolLines.length).toBeGreaterThan(45);
    for (const line of toolLines) expect(line.length).toBeLessThan(200);
  });
});
