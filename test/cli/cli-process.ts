/**
 * Runs the `rewind` CLI as a child process, the way a user runs it, against a test stack's API
 * (REWIND_URL). `runCli` waits for the exit; `spawnCli` returns at once so a test can wait for
 * a line of output (a parked call) and act on it while the command still runs.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { watchOutput } from "../helpers/child-output.ts";
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
  const name = `rewind ${args.join(" ")}`;
  const stderr = watchOutput(child, { name, streams: ["stderr"] });
  const stdout = watchOutput(child, { name, streams: ["stdout"], report: () => `${stdout.text()}\n${stderr.text()}` });
  const done = new Promise<CliResult>((resolve) =>
    child.once("close", (code) => resolve({ code, stdout: stdout.text(), stderr: stderr.text() })),
  );
  return {
    child,
    stdout: stdout.text,
    done,
    async waitFor(text, timeoutMs) {
      const pattern = typeof text === "string" ? new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")) : text;
      await stdout.waitFor(pattern, timeoutMs);
      return stdout.text();
    },
  };
}

export function runCli(args: string[], options: { url: string; cwd: string }): Promise<CliResult> {
  return spawnCli(args, options).done;
}
