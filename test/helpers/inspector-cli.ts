/**
 * The MCP Inspector's CLI (`@modelcontextprotocol/inspector-cli`, pinned as a dev dependency), run
 * as a person runs it from a shell: `mcp-inspector-cli --cli <url> --transport http --header
 * "Authorization: Bearer <key>" --method tools/call --tool-name … --tool-arg key=value…`. Each
 * command is one process and one MCP session, and prints the JSON answer on stdout. Its client
 * declares no capabilities (no elicitation) and has no task methods.
 *
 * 1.0.3 finds its own package.json by a path it checks against the working directory
 * ("../package.json") but imports relative to its own file, so run from the repository it fails
 * with "Cannot find module …/@modelcontextprotocol/package.json". It is run from its own build
 * folder, where both readings name its package.json. Its bin starts a second Node process found
 * on PATH: the Node running the tests comes first there.
 */
import path from "node:path";
import { runCommand } from "../../src/dev/run-command.ts";
import { REPO_ROOT } from "./paths.ts";

const BUILD = path.join(REPO_ROOT, "node_modules", "@modelcontextprotocol", "inspector-cli", "build");

/** Runs the CLI against the MCP server at `url` with the API key, and answers what it printed, parsed. */
export async function inspect(url: string, key: string, args: readonly string[]): Promise<Record<string, unknown>> {
  const { stdout } = await runCommand(
    process.execPath,
    [
      path.join(BUILD, "cli.js"),
      "--cli",
      url,
      "--transport",
      "http",
      "--header",
      `Authorization: Bearer ${key}`,
      ...args,
    ],
    {
      cwd: BUILD,
      env: { PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env["PATH"] ?? ""}` },
      timeoutMs: 30_000,
    },
  );
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** `tools/call` of `tool` with `args` given as the CLI takes them (`key=value`, the value JSON or a string). */
export function callTool(
  url: string,
  key: string,
  tool: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const pairs = Object.entries(args).map(([name, value]) =>
    typeof value === "string" ? `${name}=${value}` : `${name}=${JSON.stringify(value)}`,
  );
  return inspect(url, key, ["--method", "tools/call", "--tool-name", tool, "--tool-arg", ...pairs]);
}
