/**
 * `rewind replay <cassette.json> [script.ts]`: replays the recorded script, or a changed one,
 * against a cassette with no network and no tools, and says where it first differs.
 * `rewind runs cassette <id> [--out file]` saves a run's cassette.
 */
import { writeFile } from "node:fs/promises";
import { replayCassette } from "../../sdk/replay.ts";
import type { Cassette } from "../../shared/index.ts";
import { arg, parseCommand, UsageError } from "../args.ts";
import { formatDiagnostics, full, printJson, printLine } from "../output.ts";
import type { Command } from "./command.ts";
import { readText } from "./script-file.ts";

export const replay: Command = async (argv) => {
  const cmd = parseCommand(argv, {
    usage: "rewind replay <cassette.json> [script.ts] [--json]",
    positionals: ["cassette"],
    optionalPositionals: 1,
  });
  const file = arg(cmd, 0);
  let cassette: Cassette;
  try {
    cassette = JSON.parse(await readText(file, "cassette")) as Cassette;
  } catch (error) {
    if (error instanceof SyntaxError) throw new UsageError(`${file} is not JSON: ${error.message}`);
    throw error;
  }
  if (cassette.format !== "rewind.cassette/1")
    throw new UsageError(`${file} is not a Rewind cassette (format "${String(cassette.format)}")`);
  const scriptFile = cmd.args[1];
  const source = scriptFile ? await readText(scriptFile, "script") : undefined;
  const outcome = await replayCassette({ cassette, ...(source !== undefined ? { script: source } : {}) });
  if (cmd.json) printJson(outcome);
  else if (outcome.ok)
    printLine(
      `replayed ${outcome.calls} call${outcome.calls === 1 ? "" : "s"} of ${cassette.runId}: ${full(outcome.result)}`,
    );
  else if (outcome.error.kind === "typeCheck" && source !== undefined && scriptFile)
    process.stderr.write(formatDiagnostics(outcome.error.diagnostics, source, scriptFile));
  else process.stderr.write(`rewind: ${outcome.error.message}\n`);
  return outcome.ok ? 0 : 1;
};

export const saveCassette: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, {
    usage: "rewind runs cassette <id> [--out file]",
    positionals: ["id"],
    strings: ["out"],
  });
  const cassette = await api.getCassette(arg(cmd, 0));
  const out = cmd.string("out");
  if (!out) printJson(cassette);
  else {
    await writeFile(out, `${JSON.stringify(cassette, null, 2)}\n`);
    printLine(`wrote ${out}: ${cassette.entries.length} calls of ${cassette.runId}`);
  }
  return 0;
};
