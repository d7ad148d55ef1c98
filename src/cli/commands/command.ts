/**
 * What every client command is: a function of its arguments and the API client that answers
 * the process's exit code. Kept apart so the command files and the dispatcher share it
 * without importing each other.
 */
import type { ApiClient } from "../../sdk/index.ts";

export interface CliContext {
  api: ApiClient;
}

/** Answers the exit code: 0 success, 1 failure (API error, failed run), 2 usage. */
export type Command = (argv: string[], ctx: CliContext) => Promise<number>;
