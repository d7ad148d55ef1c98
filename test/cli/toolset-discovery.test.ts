/**
 * `rewind toolsets search` and `rewind toolsets show --prompt` with `--guide`, `--compact` and
 * `--tools`, run as child processes against a real stack with MCP servers of well-known tools:
 * what they print, their --json, and their usage errors (exit 2) and API errors (exit 1).
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NEEDLES } from "../helpers/large-toolset.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset } from "../helpers/toolset.ts";
import { runCli } from "./cli-process.ts";

let stack: RewindStack;
let dir: string;
let toolset: string;
const servers: TestMcpServer[] = [];
const cli = (...args: string[]) => runCli(args, { url: stack.api.url, cwd: dir });

beforeAll(async () => {
  const groups = [...new Set(NEEDLES.map((tool) => tool.group))];
  const handler = async (): Promise<CallToolResult> => ({ content: [{ type: "text", text: "ok" }] });
  const [started, made, ...mcp] = await Promise.all([
    startRewindStack(),
    mkdtemp(path.join(tmpdir(), "rewind-cli-discovery-")),
    ...groups.map((group) =>
      startMcpServer({ tools: NEEDLES.filter((tool) => tool.group === group).map((tool) => ({ ...tool, handler })) }),
    ),
  ]);
  [stack, dir] = [started, made];
  servers.push(...mcp);
  toolset = await registerToolset(stack, {
    mcpServers: Object.fromEntries(groups.map((group, i) => [group, { url: mcp[i]?.url }])),
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await Promise.all(servers.map((server) => server.close()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("rewind toolsets search", () => {
  it("prints the best-matching tools' lines, best first, at most --limit", async () => {
    const { code, stdout, stderr } = await cli(
      "toolsets",
      "search",
      toolset,
      "open",
      "a",
      "pull",
      "request",
      "--limit",
      "2",
    );
    expect([code, stderr]).toEqual([0, ""]);
    expect(stdout).toBe(
      "github.create_pull_request · Open a pull request from a branch of a repository.\n" +
        "github.merge_pull_request · Merge a pull request once its checks pass.\n",
    );
    const json = await cli("toolsets", "search", toolset, "refund a payment", "--json");
    const body = JSON.parse(json.stdout) as { tools: { name: string; score: number }[] };
    expect(body.tools[0]?.name).toBe("stripe.create_refund");
    expect((await cli("toolsets", "search", toolset, "zyxwv")).stdout).toBe("no tool matches\n");
  });

  it("refuses a bad --limit (exit 2) and names an unknown toolset (exit 1)", async () => {
    const bad = await cli("toolsets", "search", toolset, "issues", "--limit", "0");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--limit must be an integer from 1 to 100");
    expect((await cli("toolsets", "search", toolset)).code).toBe(2);
    const missing = await cli("toolsets", "search", `ts_${"0".repeat(64)}`, "issues");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^rewind: toolset ts_0+ was not found\n$/);
  });
});

describe("rewind toolsets show --prompt", () => {
  it("prints the guide before the prompt with --guide", async () => {
    const [plain, guided] = await Promise.all([
      cli("toolsets", "show", toolset, "--prompt"),
      cli("toolsets", "show", toolset, "--prompt", "--guide"),
    ]);
    expect([plain.code, guided.code]).toEqual([0, 0]);
    expect(guided.stdout.startsWith("# Writing a Rewind script\n")).toBe(true);
    expect(guided.stdout.endsWith(`\n\n${plain.stdout}`)).toBe(true);
  });

  it("prints one line per tool with --compact, and the chosen tools' declarations with --tools", async () => {
    const compact = await cli("toolsets", "show", toolset, "--prompt", "--compact");
    expect(compact.code).toBe(0);
    expect(compact.stdout).toContain("\nweather.get_forecast · Hourly weather forecast for a city: temperature");
    expect(compact.stdout).not.toContain("weather.get_forecast({");
    const chosen = await cli(
      "toolsets",
      "show",
      toolset,
      "--prompt",
      "--tools",
      "weather.get_forecast,files.read_file",
    );
    expect(chosen.code).toBe(0);
    expect(chosen.stdout.match(/^\w+\.\w+\(\{/gm)).toEqual(["files.read_file({", "weather.get_forecast({"]);
    const dts = await cli("toolsets", "show", toolset, "--dts", "--tools", "files.read_file");
    expect(dts.stdout).toContain("read_file(args: { path: string }): Promise<unknown>;");
    expect(dts.stdout).not.toContain("get_forecast");
  });

  it("refuses flags that do not go together (exit 2), and names unknown tools (exit 1)", async () => {
    for (const args of [
      ["--guide"],
      ["--compact"],
      ["--dts", "--compact"],
      ["--tools", "files.read_file"],
      ["--prompt", "--compact", "--tools", "files.read_file"],
    ]) {
      const { code, stderr } = await cli("toolsets", "show", toolset, ...args);
      expect([code, stderr.split("\n")[0]], args.join(" ")).toEqual([
        2,
        expect.stringMatching(/goes? with|one at a time/),
      ]);
    }
    const unknown = await cli("toolsets", "show", toolset, "--prompt", "--tools", "files.nope,weather.get_forecast");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("files.nope");
  });
});
