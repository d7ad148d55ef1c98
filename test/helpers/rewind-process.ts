/**
 * Runs `rewind <command>` as a child process with exactly the environment a test gives (plus
 * PATH), the way an operator's process manager would: nothing inherited from the test's own
 * environment reaches it, so a test proves the settings it names are the ones that matter.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
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
  let output = "";
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, signal) => resolve({ code, signal })),
  );
  let ended = false;
  void exited.then(() => {
    ended = true;
    for (const listener of listeners) listener();
  });
  return {
    child,
    output: () => output,
    exited,
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            finish(new Error(`no ${String(pattern)} within ${timeoutMs} ms from rewind ${args.join(" ")}:\n${output}`)),
          timeoutMs,
        );
        const check = () => {
          const match = pattern.exec(output);
          if (match) finish(undefined, match);
          else if (ended)
            finish(new Error(`rewind ${args.join(" ")} exited before printing ${String(pattern)}:\n${output}`));
        };
        function finish(error?: Error, match?: RegExpMatchArray) {
          clearTimeout(timer);
          listeners.delete(check);
          if (match) resolve(match);
          else reject(error);
        }
        listeners.add(check);
        check();
      });
    },
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
  const timer = setTimeout(() => rewind.child.kill("SIGKILL"), timeoutMs);
  const { code } = await rewind.exited;
  clearTimeout(timer);
  return { code, output: rewind.output() };
}
