/**
 * `rewind runs resolve|retry|fail <id> <seq>`: decides a call parked on an unknown outcome (an
 * `at_most_once` call under `onUnknown: "park"`), as the harness would: end it with the result
 * found out (it must fit the tool's output schema: the API's 422 says where it does not), send it
 * again with the same idempotency key, or fail it with ToolError(outcomeUnknown).
 */
import type { CallDecisionBody } from "../../contract/index.ts";
import { arg, parseCommand, seqArg, UsageError } from "../args.ts";
import { printJson, printLine } from "../output.ts";
import type { Command } from "./command.ts";
import { readText } from "./script-file.ts";

const RESOLVE_USAGE = "rewind runs resolve <id> <seq> --result json|@file [--by name] [--json]";

/** `as acme/key-1a2b3c4d for alice`: who the journal says decided. */
const decidedByText = (answer: CallDecisionBody): string =>
  answer.decidedBy
    ? ` as ${answer.decidedBy.principal}${answer.decidedBy.by ? ` for ${answer.decidedBy.by}` : ""}`
    : "";

async function resultOf(option: string | undefined): Promise<unknown> {
  if (option === undefined) throw new UsageError(`--result is required\nusage: ${RESOLVE_USAGE}`);
  const text = option.startsWith("@") ? await readText(option.slice(1), "result") : option;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(
      `--result must be JSON: ${error instanceof Error ? error.message : String(error)}\nusage: ${RESOLVE_USAGE}`,
    );
  }
}

export const resolve: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, { usage: RESOLVE_USAGE, positionals: ["id", "seq"], strings: ["result", "by"] });
  const id = arg(cmd, 0);
  const seq = seqArg(arg(cmd, 1));
  const answer = await api.resolveCall(id, seq, await resultOf(cmd.string("result")), cmd.string("by"));
  if (cmd.json) printJson(answer);
  else printLine(`resolved call ${seq} of ${id}${decidedByText(answer)}: the script gets the result, nothing is sent`);
  return 0;
};

export const retry: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, {
    usage: "rewind runs retry <id> <seq> [--by name] [--json]",
    positionals: ["id", "seq"],
    strings: ["by"],
  });
  const id = arg(cmd, 0);
  const seq = seqArg(arg(cmd, 1));
  const answer = await api.retryCall(id, seq, cmd.string("by"));
  if (cmd.json) printJson(answer);
  else printLine(`call ${seq} of ${id} is sent again, with the same idempotency key${decidedByText(answer)}`);
  return 0;
};

export const fail: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, {
    usage: "rewind runs fail <id> <seq> [--reason text] [--by name] [--json]",
    positionals: ["id", "seq"],
    strings: ["reason", "by"],
  });
  const id = arg(cmd, 0);
  const seq = seqArg(arg(cmd, 1));
  const answer = await api.failCall(id, seq, cmd.string("reason"), cmd.string("by"));
  if (cmd.json) printJson(answer);
  else printLine(`failed call ${seq} of ${id}${decidedByText(answer)}: the script gets ToolError(outcomeUnknown)`);
  return 0;
};
