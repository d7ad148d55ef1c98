/**
 * Reading the files a command is given (scripts, toolset documents, `--input @file`) with
 * errors that name the file, and showing a script's type errors against the file as written.
 */
import { readFile } from "node:fs/promises";
import { RewindApiError } from "../../sdk/api-client.ts";
import { formatDiagnostics, isDiagnosticList } from "../output.ts";

export async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === "ENOENT"
        ? "no such file"
        : code === "EISDIR"
          ? "it is a directory"
          : error instanceof Error
            ? error.message
            : String(error);
    throw new Error(`could not read the ${what} ${file}: ${reason}`);
  }
}

/**
 * Writes a 422 typeCheckFailed as tsc would (stderr) and answers true; any other error is
 * left to the caller. With --json the API's body goes to stdout as well.
 */
export function reportTypeErrors(error: unknown, source: string, file: string, json: boolean): boolean {
  if (!(error instanceof RewindApiError) || error.code !== "typeCheckFailed" || !isDiagnosticList(error.details))
    return false;
  if (json) process.stdout.write(`${JSON.stringify(error.body, null, 2)}\n`);
  process.stderr.write(formatDiagnostics(error.details, source, file));
  return true;
}
