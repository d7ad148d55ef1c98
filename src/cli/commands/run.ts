/**
 * `rewind run <script.ts> [--toolset id] [--input json|@file] [--watch]`: start a run of a
 * script file. The API type-checks it first; its type errors are shown against the file as
 * written, like tsc. With --watch the command follows the run and exits with its outcome.
 */
import { arg, parseCommand, UsageError } from "../args.ts";
import { printJson, printLine } from "../output.ts";
import { watchRun } from "../watch.ts";
import type { Command } from "./command.ts";
import { readText, reportTypeErrors } from "./script-file.ts";

const USAGE =
  "rewind run <script.ts> [--toolset id] [--input json|@file] [--watch] [--idempotency-key key] [--end-user id] [--on-failure fail|rollback] [--approve-script] [--json]";

async function parseInput(value: string | undefined): Promise<unknown> {
  if (value === undefined) return undefined;
  const fromFile = value.startsWith("@");
  const text = fromFile ? await readText(value.slice(1), "input file") : value;
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UsageError(`--input must be JSON${fromFile ? ` (${value.slice(1)} is not)` : " or @file"}: ${reason}`);
  }
}

export const runScript: Command = async (argv, { api, hint }) => {
  const cmd = parseCommand(argv, {
    usage: USAGE,
    positionals: ["script.ts"],
    strings: ["toolset", "input", "idempotency-key", "end-user", "on-failure"],
    booleans: ["watch", "approve-script"],
  });
  const file = arg(cmd, 0);
  const source = await readText(file, "script");
  const input = await parseInput(cmd.string("input"));
  const toolset = cmd.string("toolset");
  const idempotencyKey = cmd.string("idempotency-key");
  const endUser = cmd.string("end-user");
  const onFailure = cmd.string("on-failure");
  if (onFailure !== undefined && onFailure !== "fail" && onFailure !== "rollback")
    throw new UsageError(`--on-failure must be fail or rollback, got "${onFailure}"`);
  let run;
  try {
    run = await api.startRun({
      script: source,
      ...(input !== undefined ? { input } : {}),
      ...(toolset ? { toolset } : {}),
      ...(idempotencyKey ? { idempotencyKey } : {}),
      ...(endUser ? { endUser } : {}),
      ...(onFailure ? { onFailure } : {}),
      ...(cmd.flag("approve-script") ? { approveScript: true } : {}),
    });
  } catch (error) {
    if (reportTypeErrors(error, source, file, cmd.json)) return 1;
    throw error;
  }
  if (cmd.flag("watch")) {
    if (!cmd.json) printLine(`started ${run.id}${run.toolset ? ` · toolset ${run.toolset}` : ""}`);
    return watchRun(api, run.id, { json: cmd.json, initial: run, hint });
  }
  if (cmd.json) {
    printJson(run);
    return 0;
  }
  printLine(`started ${run.id} (${run.status})`);
  if (run.temporalUrl) printLine(`temporal: ${run.temporalUrl}`);
  if (cmd.flag("approve-script")) printLine(`approve its script: ${hint(`runs approve-script ${run.id}`)}`);
  printLine(`watch it: ${hint(`runs watch ${run.id}`)}`);
  return 0;
};
