/**
 * The `rewind` commands that talk to a running API (toolsets, run, runs, workflows, events):
 * find the command, build the API client from REWIND_URL and REWIND_API_KEY, run it, and turn
 * whatever went wrong into one sentence on stderr and an exit code (1 failure, 2 usage).
 * Imports nothing of the worker or Temporal, so these commands start fast.
 */
import { ConfigError, DEFAULT_API_URL, loadClientConfig } from "../config.ts";
import { createApiClient, RewindApiError } from "../sdk/api-client.ts";
import { HelpRequested, UsageError, usageEntries } from "./args.ts";
import type { Command } from "./commands/command.ts";
import { replay } from "./commands/replay.ts";
import { EVENTS_ENDPOINT_COMMANDS } from "./commands/events.ts";
import { runScript } from "./commands/run.ts";
import { RUNS_COMMANDS } from "./commands/runs.ts";
import { registerToolset, searchToolset, showToolset } from "./commands/toolsets.ts";
import { WORKFLOWS_COMMANDS } from "./commands/workflows.ts";

export const CLIENT_USAGE = `  toolsets register <file.json|yaml>                  register a toolset (MCP servers, host tools, policies)
  toolsets show <id> [--dts|--prompt [--guide] [--compact]] [--tools a.b,c.d]
                                                      the pinned toolset, or the declarations a model sees
                                                      (--guide: after the guide to writing a script;
                                                      --compact: one line per tool; --tools: only those)
  toolsets search <id> <query> [--limit n]            the tools that best match a few words, best first
  run <script.ts> [--toolset id] [--input json|@file] [--watch] [--on-failure rollback]
                                                      type-check and start a run; --watch follows it to the end
                                                      (--on-failure rollback: a failed script rolls back)
  runs list [--status s] [--toolset id] [--end-user name] [--started-after iso] [--started-before iso]
                                                      runs of this namespace, newest first (status: running,
                                                      parked, completed, failed, cancelled or rolledBack)
  runs show|journal|watch|cancel <id>                 a run, its calls, follow it, cancel it
  runs rollback <id> [--reason text] [--by name]      stop the script and revert its completed calls, newest first
  runs approve <id> <seq> [--by name]                 send a call parked for approval (--by: on whose behalf)
  runs reject <id> <seq> [--reason text] [--by name]  the script gets ToolError(rejected)
  runs resume <id> <seq> [--by name]                  send again a call parked on expired credentials
  runs answer <id> <seq> --accept json|--decline|--cancel
                                                      answer the input a call's MCP server asked for
  runs resolve <id> <seq> --result json|@file [--by name]
                                                      end a call parked on an unknown outcome with its result
  runs retry|fail <id> <seq> [--reason text] [--by name]
                                                      send it again with the same key, or fail it (outcomeUnknown)
  runs approve-script|reject-script <id> [--reason text] [--by name]
                                                      let a run's script run (run --approve-script), or reject it
  runs fork <id> <script.ts> [--cancel-parent]        a new run reusing the parent's calls until the script differs
  runs cassette <id> [--out file]                     the run, self-contained, for offline replay
  runs save <id> <name> [--description text] [--toolset id]
                                                      store the run's script as a workflow toolsets can pin
  replay <cassette.json> [script.ts]                  replay a script against a cassette, offline
  workflows store <name> <script.ts> [--toolset id]   store a workflow script toolsets can pin
  workflows show <id>                                 a stored workflow script
  events endpoint set <url> [--secret whsec_…]        where this namespace's events go
  events endpoint show                                the events endpoint's URL

  Every command takes --json (the API's JSON on stdout, nothing else).
  REWIND_URL (default http://127.0.0.1:8787; --url <api> on any command wins) and REWIND_API_KEY say which API to talk to.
`;

interface Group {
  [word: string]: Command | Group;
}

const GROUPS: Group = {
  run: runScript,
  toolsets: { register: registerToolset, show: showToolset, search: searchToolset },
  runs: RUNS_COMMANDS,
  workflows: WORKFLOWS_COMMANDS,
  events: { endpoint: EVENTS_ENDPOINT_COMMANDS },
  replay,
};

export const CLIENT_COMMANDS = new Set(Object.keys(GROUPS));

/** Walks `toolsets show …` down the table; answers the command and its own arguments. */
function find(argv: string[]): { command: Command; rest: string[] } {
  let node: Command | Group = GROUPS;
  const path: string[] = [];
  let i = 0;
  while (typeof node === "object") {
    const word: string | undefined = argv[i];
    const next: Command | Group | undefined = word !== undefined ? node[word] : undefined;
    if (path.length > 0 && (word === "--help" || word === "-h"))
      throw new HelpRequested(`usage:\n${usageEntries(CLIENT_USAGE, path.join(" "))}`);
    if (!word || !next || word.startsWith("-")) {
      const choices = Object.keys(node).join(", ");
      throw new UsageError(
        `${word && !word.startsWith("-") ? `unknown command "${[...path, word].join(" ")}"` : `rewind ${path.join(" ")} needs a command`}: ${choices}`,
      );
    }
    path.push(word);
    node = next;
    i++;
  }
  return { command: node, rest: argv.slice(i) };
}

function report(error: unknown, json: boolean): number {
  if (error instanceof HelpRequested) {
    process.stdout.write(`${error.message}\n`);
    return 0;
  }
  if (error instanceof UsageError) {
    process.stderr.write(`rewind: ${error.message}\n`);
    return 2;
  }
  if (error instanceof RewindApiError && json && error.body !== undefined)
    process.stdout.write(`${JSON.stringify(error.body, null, 2)}\n`);
  const message =
    error instanceof RewindApiError || error instanceof ConfigError || error instanceof Error
      ? error.message
      : String(error);
  process.stderr.write(`rewind: ${message}\n`);
  return 1;
}

/** Whether a command line's first word is `--url`: a client command follows (`rewind --url <api> runs …`). */
export function namesApi(word: string): boolean {
  return word === "--url" || word.startsWith("--url=");
}

/** `--url <api>` or `--url=<api>` anywhere among the arguments: the API to talk to, and the rest. */
function urlFlag(argv: string[]): { url: string | undefined; rest: string[] } {
  const rest: string[] = [];
  let url: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--url") {
      url = argv[++i];
      if (url === undefined) throw new UsageError("--url needs the API's URL, e.g. --url http://127.0.0.1:8787");
    } else if (arg.startsWith("--url=")) url = arg.slice("--url=".length);
    else rest.push(arg);
  }
  return { url, rest };
}

/** Runs a client command; answers the exit code. */
export async function runClientCommand(argv: string[]): Promise<number> {
  try {
    const { url, rest: args } = urlFlag(argv);
    const { command, rest } = find(args);
    const config = loadClientConfig(undefined, url);
    const reach = config.url === DEFAULT_API_URL ? "" : ` --url ${config.url}`;
    return await command(rest, {
      api: createApiClient({ url: config.url, apiKey: config.apiKey }),
      hint: (words) => `rewind${reach} ${words}`,
      variable: config.variable,
    });
  } catch (error) {
    return report(error, argv.includes("--json"));
  }
}
