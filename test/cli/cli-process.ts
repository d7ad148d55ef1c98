/**
 * Runs the `rewind` CLI as a child process, the way a user runs it, against a test stack's API
 * (REWIND_URL). `runCli` waits for the exit; `spawnCli` returns at once so a test can wait for
 * a line of output (a parked call) and act on it while the command still runs.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { REPO_ROOT } from "../helpers/paths.ts";

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  /** Resolves once stdout contains `text`; rejects when the process exits first or after `timeoutMs`. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<string>;
  done: Promise<CliResult>;
}

export function spawnCli(args: string[], options: { url: string; cwd: string }): CliProcess {
  const env: Record<string, string | undefined> = { ...process.env, REWIND_URL: options.url };
  delete env["REWIND_API_KEY"];
  const child = spawn(
    process.execPath,
    ["--no-node-snapshot", "--disable-warning=ExperimentalWarning", path.join(REPO_ROOT, "src/cli/main.ts"), ...args],
    {
      cwd: options.cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let closed = false;
  const done = new Promise<CliResult>((resolve) =>
    child.once("close", (code) => {
      closed = true;
      resolve({ code, stdout, stderr });
    }),
  );
  const matches = (text: string | RegExp) => (typeof text === "string" ? stdout.includes(text) : text.test(stdout));
  return {
    child,
    stdout: () => stdout,
    done,
    waitFor(text, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => finish(new Error(`no ${String(text)} in the output within ${timeoutMs} ms:\n${stdout}\n${stderr}`)),
          timeoutMs,
        );
        const check = () => {
          if (matches(text)) finish();
        };
        const exited = () =>
          finish(new Error(`the command exited before printing ${String(text)}:\n${stdout}\n${stderr}`));
        function finish(error?: Error) {
          clearTimeout(timer);
          child.stdout?.off("data", check);
          child.off("close", exited);
          if (error && !matches(text)) reject(error);
          else resolve(stdout);
        }
        child.stdout?.on("data", check);
        child.once("close", exited);
        check();
        if (closed) exited();
      });
    },
  };
}

export function runCli(args: string[], options: { url: string; cwd: string }): Promise<CliResult> {
  return spawnCli(args, options).done;
}
