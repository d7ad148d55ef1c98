/**
 * `rewind runs answer <id> <seq> --accept json|@file | --decline | --cancel`: answers the input a
 * call's MCP server asked for (an elicitation), as the harness would. Exactly one of the three;
 * content that does not fit the requested schema comes back as the API's 422, field by field.
 */
import type { ElicitationAnswer } from "../../shared/index.ts";
import { arg, parseCommand, seqArg, UsageError } from "../args.ts";
import { printJson, printLine } from "../output.ts";
import type { Command } from "./command.ts";
import { readText } from "./script-file.ts";

const USAGE = "rewind runs answer <id> <seq> (--accept json|@file | --decline | --cancel) [--json]";

async function contentOf(option: string): Promise<Record<string, unknown>> {
  const text = option.startsWith("@") ? await readText(option.slice(1), "answer") : option;
  let content: unknown;
  try {
    content = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `--accept must be a JSON object: ${error instanceof Error ? error.message : String(error)}\nusage: ${USAGE}`,
    );
  }
  if (typeof content !== "object" || content === null || Array.isArray(content))
    throw new UsageError(`--accept must be a JSON object\nusage: ${USAGE}`);
  return content as Record<string, unknown>;
}

export const answer: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, {
    usage: USAGE,
    positionals: ["id", "seq"],
    strings: ["accept"],
    booleans: ["decline", "cancel"],
  });
  const id = arg(cmd, 0);
  const seq = seqArg(arg(cmd, 1));
  const accept = cmd.string("accept");
  const chosen = [accept !== undefined, cmd.flag("decline"), cmd.flag("cancel")].filter(Boolean).length;
  if (chosen !== 1) throw new UsageError(`give exactly one of --accept, --decline, --cancel\nusage: ${USAGE}`);
  const body: ElicitationAnswer =
    accept !== undefined
      ? { action: "accept", content: await contentOf(accept) }
      : { action: cmd.flag("decline") ? "decline" : "cancel" };
  const answered = await api.answerElicitation(id, seq, body);
  if (cmd.json) printJson(answered);
  else printLine(`answered call ${seq} of ${id} (${body.action}); the call goes on`);
  return 0;
};
