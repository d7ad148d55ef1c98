/**
 * One way to run a short-lived helper command (`temporal --version`, `python3 -m venv`, `go
 * install`) and, when it fails, get an Error that carries the command and the tail of its output —
 * the part a user needs to fix a broken install.
 */

import { execFile, type ExecFileException } from "node:child_process";

export interface RunCommandOptions {
  /** Environment for the child. Default: inherited from this process. */
  env?: NodeJS.ProcessEnv | undefined;
  /** Working directory of the child. Default: this process's. */
  cwd?: string;
  /** Kill the child after this many milliseconds. Default 60 000. */
  timeoutMs?: number;
}

export interface CommandOutput {
  stdout: string;
  stderr: string;
}

/** Runs `file args…` without a shell; resolves with its output, rejects with a readable Error. */
export async function runCommand(
  file: string,
  args: string[],
  options: RunCommandOptions = {},
): Promise<CommandOutput> {
  const shown = [file, ...args].join(" ");
  return new Promise<CommandOutput>((resolve, reject) => {
    execFile(
      file,
      args,
      {
        env: options.env,
        cwd: options.cwd,
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: 16 * 1024 * 1024,
        encoding: "utf8",
      },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve({ stdout, stderr });
          return;
        }
        const failure = describeFailure(error, options.timeoutMs ?? 60_000);
        reject(new Error(`\`${shown}\` ${failure}${outputTail(stdout, stderr)}`, { cause: error }));
      },
    );
  });
}

function describeFailure(error: ExecFileException, timeoutMs: number): string {
  if (error.code === "ENOENT") return "failed: command not found";
  if (error.code === "EACCES") return "failed: not executable (permission denied)";
  if (error.killed === true) return `timed out after ${timeoutMs / 1000} s and was killed`;
  if (typeof error.code === "number") return `exited with code ${error.code}`;
  if (typeof error.signal === "string") return `was killed by ${error.signal}`;
  return `failed: ${error.message}`;
}

/** The last few non-empty output lines, indented, or "" when the command printed nothing. */
export function outputTail(stdout: string, stderr: string, maxLines = 12): string {
  const lines = `${stdout}\n${stderr}`.split("\n").filter((line) => line.trim() !== "");
  if (lines.length === 0) return "";
  return `:\n${lines
    .slice(-maxLines)
    .map((line) => `    ${line}`)
    .join("\n")}`;
}
