/**
 * `rewind workflows store <name> <script.ts> [--toolset id]` and `rewind workflows show <id>`:
 * workflow scripts that toolsets pin by name and runs start as children. Storing type-checks
 * the script against its toolset, so its type errors are shown like `rewind run`'s.
 */
import { arg, parseCommand } from "../args.ts";
import { printJson, printLine } from "../output.ts";
import type { Command } from "./command.ts";
import { readText, reportTypeErrors } from "./script-file.ts";

const store: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, {
    usage: "rewind workflows store <name> <script.ts> [--toolset id] [--json]",
    positionals: ["name", "script.ts"],
    strings: ["toolset"],
  });
  const file = arg(cmd, 1);
  const source = await readText(file, "script");
  const toolset = cmd.string("toolset");
  let stored;
  try {
    stored = await api.storeWorkflow({ name: arg(cmd, 0), script: source, ...(toolset ? { toolset } : {}) });
  } catch (error) {
    if (reportTypeErrors(error, source, file, cmd.json)) return 1;
    throw error;
  }
  if (cmd.json) printJson(stored);
  else
    printLine(
      `stored ${stored.id} as workflows.${stored.name} (toolset ${stored.toolset})\npin it in a toolset: workflows: { ${stored.name}: ${stored.id} }`,
    );
  return 0;
};

const show: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, { usage: "rewind workflows show <id> [--json]", positionals: ["id"] });
  const workflow = await api.getWorkflow(arg(cmd, 0));
  if (cmd.json) printJson(workflow);
  else
    printLine(
      `${workflow.id}  workflows.${workflow.name}\n  toolset  ${workflow.toolset}\n  script   sha256 ${workflow.scriptHash}`,
    );
  return 0;
};

export const WORKFLOWS_COMMANDS: Record<string, Command> = { store, show };
