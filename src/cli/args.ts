/**
 * Argument parsing for the client commands, on node:util's parseArgs: strict, so a mistyped
 * option is a usage error (exit code 2) that shows the command's usage, not a silent no-op.
 * Every command takes `--json`.
 */
import { parseArgs } from "node:util";

/** Wrong arguments: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** `--help` or `-h` among a command's arguments: its usage (the message) goes to stdout, exit code 0. */
export class HelpRequested extends Error {
  override name = "HelpRequested";
}

export const asksForHelp = (argv: readonly string[]): boolean => argv.includes("--help") || argv.includes("-h");

/**
 * The entries of a usage listing (`  name args   what it does`, continued on indented lines)
 * whose first line starts with `prefix` (`runs`, `runs cancel`).
 */
export function usageEntries(usage: string, prefix: string): string {
  const entries: string[][] = [];
  for (const line of usage.split("\n")) {
    if (/^ {2}\S/.test(line)) entries.push([line]);
    else if (line.trim() !== "") entries.at(-1)?.push(line);
  }
  return entries
    .filter(([first]) => first !== undefined && `${first.trim()} `.startsWith(`${prefix} `))
    .map((entry) => entry.join("\n"))
    .join("\n");
}

export interface CommandSpec {
  /** `rewind runs approve <id> <seq>`: shown on a usage error. */
  usage: string;
  /** Names of the required positionals, in order. */
  positionals?: string[];
  /** Options taking a value (`--toolset id`). */
  strings?: string[];
  /** Flags (`--watch`). */
  booleans?: string[];
  /** How many positionals may follow the required ones. Default 0. */
  optionalPositionals?: number;
}

export interface ParsedCommand {
  args: string[];
  json: boolean;
  string(name: string): string | undefined;
  flag(name: string): boolean;
}

export function parseCommand(argv: string[], spec: CommandSpec): ParsedCommand {
  if (asksForHelp(argv)) throw new HelpRequested(`usage: ${spec.usage}`);
  const options: Record<string, { type: "string" | "boolean" }> = { json: { type: "boolean" } };
  for (const name of spec.strings ?? []) options[name] = { type: "string" };
  for (const name of spec.booleans ?? []) options[name] = { type: "boolean" };
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}\nusage: ${spec.usage}`);
  }
  const wanted = spec.positionals ?? [];
  if (parsed.positionals.length < wanted.length) {
    throw new UsageError(
      `missing ${wanted
        .slice(parsed.positionals.length)
        .map((name) => `<${name}>`)
        .join(" ")}\nusage: ${spec.usage}`,
    );
  }
  const most = wanted.length + (spec.optionalPositionals ?? 0);
  if (parsed.positionals.length > most) {
    throw new UsageError(`unexpected argument "${parsed.positionals[most]}"\nusage: ${spec.usage}`);
  }
  const { values } = parsed;
  return {
    args: parsed.positionals,
    json: values["json"] === true,
    string: (name) => (typeof values[name] === "string" ? values[name] : undefined),
    flag: (name) => values[name] === true,
  };
}

/** The positional at `index`, which parseCommand has checked is there. */
export function arg(parsed: ParsedCommand, index: number): string {
  return parsed.args[index] ?? "";
}

/** A call's seq as the user typed it: a positive integer, or a usage error. */
export function seqArg(value: string): number {
  const seq = Number(value);
  if (!Number.isInteger(seq) || seq < 1)
    throw new UsageError(`<seq> must be a positive integer (the call's number in the journal), got "${value}"`);
  return seq;
}
