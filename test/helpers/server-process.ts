/**
 * A server a test runs as a child process (moto, the Python MCP servers, mcp-proxy): its recent
 * output kept for failure messages, killed if the test process exits first, and stopped with a
 * signal that turns into SIGKILL when the server ignores it. One copy of what every such helper
 * needs, so each says only what it starts and how it knows the server answers.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable } from "node:stream";

export interface ServerProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** The last 8 KB of its stdout and stderr, interleaved. */
  output(): string;
  /** Whether it has exited. */
  readonly ended: boolean;
  /** Sends `signal` (default SIGTERM), then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export function startServerProcess(
  file: string,
  args: readonly string[],
  options: { env: Record<string, string>; graceMs?: number },
): ServerProcess {
  const child = spawn(file, args, { env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8_000);
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const ended = () => child.exitCode !== null || child.signalCode !== null;
  return {
    child,
    output: () => output,
    get ended() {
      return ended();
    },
    async stop(signal = "SIGTERM") {
      process.removeListener("exit", killOnExit);
      if (ended()) return;
      child.kill(signal);
      const killer = setTimeout(() => child.kill("SIGKILL"), options.graceMs ?? 3_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
