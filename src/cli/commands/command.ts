/**
 * What every client command is: a function of its arguments and the client context (the API
 * client, how to write a `rewind` command the user can paste, what a document's `${NAME}` stands
 * for) that answers the process's exit code. Kept apart so the command files and the dispatcher
 * share it without importing each other.
 */
import type { ApiClient } from "../../sdk/index.ts";

/** `rewind <command>` as the user should type it to reach the same API (with `--url` when it is not the default). */
export type CommandHint = (command: string) => string;

export interface CliContext {
  api: ApiClient;
  hint: CommandHint;
  /** What `${NAME}` in a document this command reads stands for; undefined when unset. */
  variable(name: string): string | undefined;
}

/** Answers the exit code: 0 success, 1 failure (API error, failed run), 2 usage. */
export type Command = (argv: string[], ctx: CliContext) => Promise<number>;
