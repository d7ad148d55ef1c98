/**
 * `rewind toolsets register <file.json|yaml>`, `rewind toolsets show <id> [--dts|--prompt]` (in
 * full, compact, or for chosen tools) and `rewind toolsets search <id> <query>`.
 * A toolset document is easier to write in YAML, so both are accepted, with `${NAME}` in its
 * values standing for an environment variable (document-variables.ts); the API validates it,
 * and its errors (a server that does not answer, a policy naming no tool) are shown as sent,
 * as are the tools it left out because their schemas can't be used.
 */
import { parse as parseYaml } from "yaml";
import type { ToolsetView, RegisterToolsetBody } from "../../contract/index.ts";
import { arg, parseCommand, UsageError } from "../args.ts";
import { printJson, printLine, table } from "../output.ts";
import type { Command } from "./command.ts";
import { expandVariables } from "./document-variables.ts";
import { readText } from "./script-file.ts";

function parseDocument(file: string, text: string): unknown {
  const yaml = /\.ya?ml$/i.test(file);
  try {
    return yaml ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new Error(`${file} is not valid ${yaml ? "YAML" : "JSON"}: ${message}`);
  }
}

function summary(view: ToolsetView): string {
  const { document } = view;
  const rows: string[][] = [];
  const policies = (group: string, tool: string) => {
    const policy = document.policies[`${group}.${tool}`];
    return policy
      ? Object.entries(policy)
          .map(([key, value]) => (value === true ? key : `${key}=${String(value)}`))
          .join(" ")
      : "";
  };
  for (const [group, server] of Object.entries(document.mcpServers)) {
    for (const tool of server.tools)
      rows.push([`  ${group}.${tool.name}`, "mcp", policies(group, tool.name), tool.description?.split("\n")[0] ?? ""]);
  }
  for (const [group, host] of Object.entries(document.hostTools)) {
    for (const tool of host.tools)
      rows.push([
        `  ${group}.${tool.name}`,
        `host (${host.taskQueue})`,
        policies(group, tool.name),
        tool.description?.split("\n")[0] ?? "",
      ]);
  }
  const lines = [`toolset ${view.id}`];
  if (document.base) lines.push(`  base ${document.base}`);
  lines.push(rows.length > 0 ? table(rows) : "  no tools");
  for (const [name, id] of Object.entries(document.workflows)) lines.push(`  workflows.${name} → ${id}`);
  if (document.http) lines.push(`  http: ${document.http.allowedHosts.join(", ") || "no hosts"}`);
  return lines.join("\n");
}

export const registerToolset: Command = async (argv, { api, hint, variable }) => {
  const cmd = parseCommand(argv, {
    usage: "rewind toolsets register <file.json|yaml> [--json]",
    positionals: ["file"],
  });
  const file = arg(cmd, 0);
  const document = expandVariables(parseDocument(file, await readText(file, "toolset document")), variable, file);
  const view = await api.registerToolset(document as RegisterToolsetBody);
  if (cmd.json) {
    printJson(view);
    return 0;
  }
  printLine(summary(view));
  if (view.omittedTools.length > 0) {
    printLine("\nleft out (a schema can't be used):");
    for (const t of view.omittedTools) printLine(`  ${t.server}.${t.tool}  ${t.message}`);
  }
  printLine(`\nwhat a model sees: ${hint(`toolsets show ${view.id} --prompt`)}`);
  return 0;
};

export const showToolset: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, {
    usage: "rewind toolsets show <id> [--dts|--prompt [--guide] [--compact]] [--tools a.b,c.d] [--json]",
    positionals: ["id"],
    booleans: ["dts", "prompt", "guide", "compact"],
    strings: ["tools"],
  });
  const id = arg(cmd, 0);
  if (cmd.flag("dts") && cmd.flag("prompt")) throw new UsageError("--dts and --prompt go one at a time");
  for (const flag of ["guide", "compact"])
    if (cmd.flag(flag) && !cmd.flag("prompt")) throw new UsageError(`--${flag} goes with --prompt`);
  const tools = cmd.string("tools");
  if (tools !== undefined && !cmd.flag("dts") && !cmd.flag("prompt"))
    throw new UsageError("--tools goes with --dts or --prompt");
  if (tools !== undefined && cmd.flag("compact")) throw new UsageError("--tools and --compact go one at a time");
  const format = cmd.flag("dts") ? "dts" : cmd.flag("prompt") ? "prompt" : undefined;
  if (format) {
    const text = await api.getDeclarations(id, format, {
      guide: cmd.flag("guide"),
      compact: cmd.flag("compact"),
      ...(tools === undefined ? {} : { tools: tools.split(",") }),
    });
    if (cmd.json) printJson(text);
    else process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
    return 0;
  }
  const view = await api.getToolset(id);
  if (cmd.json) printJson(view);
  else printLine(summary(view));
  return 0;
};

/** `rewind toolsets search <id> <query…>`: the best-matching tools' compact lines, best first. */
export const searchToolset: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, {
    usage: "rewind toolsets search <id> <query> [--limit n] [--json]",
    positionals: ["id", "query"],
    optionalPositionals: 20,
    strings: ["limit"],
  });
  const limitText = cmd.string("limit");
  const limit = limitText === undefined ? undefined : Number(limitText);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 100))
    throw new UsageError(`--limit must be an integer from 1 to 100, got "${limitText ?? ""}"`);
  const found = await api.searchTools(arg(cmd, 0), cmd.args.slice(1).join(" "), limit === undefined ? {} : { limit });
  if (cmd.json) printJson(found);
  else if (found.tools.length === 0) printLine("no tool matches");
  else printLine(found.tools.map((tool) => tool.line).join("\n"));
  return 0;
};
