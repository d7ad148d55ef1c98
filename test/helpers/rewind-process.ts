/**
 * Runs `rewind <command>` as a child process with exactly the environment a test gives (plus
 * PATH), the way an operator's process manager would: nothing inherited from the test's own
 * environment reaches it, so a test proves the settings it names are the ones that matter.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { watchOutput } from "./child-output.ts";
import { REPO_ROOT } from "./paths.ts";

export interface RewindProcess {
  child: ChildProcess;
  /** stdout and stderr so far, interleaved. */
  output(): string;
  /** Resolves once the output matches; rejects if the process exits first or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` (default SIGTERM) unless it already ended, and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export function spawnRewind(args: string[], env: Record<string, string>, cwd: string = REPO_ROOT): RewindProcess {
  const child = spawn(
    process.execPath,
    ["--no-node-snapshot", "--disable-warning=ExperimentalWarning", path.join(REPO_ROOT, "src/cli/main.ts"), ...args],
    {
      cwd,
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const output = watchOutput(child, { name: `rewind ${args.join(" ")}` });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    output: output.text,
    exited,
    waitFor: output.waitFor,
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** Runs a command to its end: exit code and everything it printed. */
export async function runRewind(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ code: number | null; output: string }> {
  const rewind = spawnRewind(args, env);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    rewind.child.kill("SIGKILL");
  }, timeoutMs);
  const { code } = await rewind.exited;
  clearTimeout(timer);
  const output = rewind.output();
  return {
    code,
    output: timedOut
      ? `${output}\n[rewind ${args.join(" ")}: timed out after ${timeoutMs / 1000} s and was killed]`
      : output,
  };
}
