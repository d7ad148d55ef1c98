/**
 * `rewind events endpoint set <url> [--secret whsec_…]` and `rewind events endpoint show`:
 * where this namespace's events (approval requested, run completed or failed) are posted. A
 * secret the API generates is shown once, so the command says so.
 */
import { arg, parseCommand } from "../args.ts";
import { printJson, printLine } from "../output.ts";
import type { Command } from "./command.ts";

const set: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, {
    usage: "rewind events endpoint set <url> [--secret whsec_…] [--json]",
    positionals: ["url"],
    strings: ["secret"],
  });
  const secret = cmd.string("secret");
  const endpoint = await api.setEventsEndpoint({ url: arg(cmd, 0), ...(secret ? { secret } : {}) });
  if (cmd.json) {
    printJson(endpoint);
    return 0;
  }
  printLine(`events of this namespace go to ${endpoint.url}`);
  if (endpoint.secret) printLine(`signing secret (shown only now, keep it): ${endpoint.secret}`);
  return 0;
};

const show: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, { usage: "rewind events endpoint show [--json]" });
  const endpoint = await api.getEventsEndpoint();
  if (cmd.json) printJson(endpoint);
  else printLine(`events of this namespace go to ${endpoint.url}`);
  return 0;
};

export const EVENTS_ENDPOINT_COMMANDS: Record<string, Command> = { set, show };
