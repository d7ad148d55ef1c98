/**
 * `rewind runs approve-script|reject-script <id>`: the harness's decision on the script of a run
 * that waits for it before its first step (`approveScript`, or a toolset's `scriptApproval:
 * required`). Approving lets the script run; rejecting ends the run failed with ScriptRejected.
 */
import type { ScriptDecisionBody } from "../../contract/index.ts";
import { arg, parseCommand } from "../args.ts";
import { printJson, printLine } from "../output.ts";
import type { Command } from "./command.ts";

const decidedByText = (answer: ScriptDecisionBody): string =>
  answer.decidedBy
    ? ` as ${answer.decidedBy.principal}${answer.decidedBy.by ? ` for ${answer.decidedBy.by}` : ""}`
    : "";

export const approveScript: Command = async (argv, { api, hint }) => {
  const cmd = parseCommand(argv, {
    usage: "rewind runs approve-script <id> [--by name] [--json]",
    positionals: ["id"],
    strings: ["by"],
  });
  const id = arg(cmd, 0);
  const answer = await api.approveScript(id, cmd.string("by"));
  if (cmd.json) printJson(answer);
  else printLine(`approved the script of ${id}${decidedByText(answer)}: it runs\n  watch: ${hint(`runs watch ${id}`)}`);
  return 0;
};

export const rejectScript: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, {
    usage: "rewind runs reject-script <id> [--reason text] [--by name] [--json]",
    positionals: ["id"],
    strings: ["reason", "by"],
  });
  const id = arg(cmd, 0);
  const answer = await api.rejectScript(id, cmd.string("reason"), cmd.string("by"));
  if (cmd.json) printJson(answer);
  else printLine(`rejected the script of ${id}${decidedByText(answer)}: the run fails with ScriptRejected, never run`);
  return 0;
};
