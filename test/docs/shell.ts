/**
 * Runs a README command as a user types it: `sh -c` in a process group of its own, with exactly
 * the environment given (plus PATH with a `rewind` command on it). Stopping sends the signal to
 * the whole group, as a terminal's Ctrl-C does, so `npm run …` and the node process under it
 * both get it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { watchOutput } from "../helpers/child-output.ts";
import { REPO_ROOT } from "../helpers/paths.ts";

export interface ShellProcess {
  child: ChildProcess;
  /** stdout and stderr so far, interleaved. */
  output(): string;
  /** Resolves with the match once the output matches; rejects when the process exits first or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; output: string }>;
  /** Sends `signal` to the process group unless it ended, and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; output: string }>;
}

/** A folder holding a `rewind` executable that runs this repository's CLI on this Node. */
export async function rewindBinDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "rewind-bin-"));
  const main = path.join(REPO_ROOT, "src/cli/main.ts");
  await writeFile(
    path.join(dir, "rewind"),
    `#!/bin/sh\nexec "${process.execPath}" --no-node-snapshot --disable-warning=ExperimentalWarning "${main}" "$@"\n`,
    { mode: 0o755 },
  );
  return dir;
}

export function spawnShell(command: string, options: { cwd: string; env: Record<string, string> }): ShellProcess {
  const child = spawn("sh", ["-c", command], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  const output = watchOutput(child, { name: `\`${command}\`` });
  let ended = false;
  const exited = new Promise<{ code: number | null; output: string }>((resolve) =>
    child.once("close", (code) => {
      ended = true;
      resolve({ code, output: output.text() });
    }),
  );
  return {
    child,
    output: output.text,
    exited,
    waitFor: output.waitFor,
    async stop(signal = "SIGTERM") {
      if (!ended && child.pid !== undefined) {
        try {
          process.kill(-child.pid, signal);
        } catch {
          // The group is gone already.
        }
      }
      return exited;
    },
  };
}

/** Runs a command to its end (killed after `timeoutMs`): exit code and everything it printed. */
export async function runShell(
  command: string,
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<{ code: number | null; output: string }> {
  const shell = spawnShell(command, options);
  shell.child.stdin?.end();
  const timer = setTimeout(() => void shell.stop("SIGKILL"), options.timeoutMs ?? 60_000);
  const result = await shell.exited;
  clearTimeout(timer);
  return result;
}
