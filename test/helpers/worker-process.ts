/**
 * Runs a Rewind worker in a child process (`rewind worker`), so a test can SIGKILL it the way
 * a crash or an OOM killer would, and start another one.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { REPO_ROOT } from "./paths.ts";
import type { RewindStack } from "./rewind-stack.ts";
import { TEST_SECRET_KEY } from "./secret-key.ts";

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function spawnWorker(env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(
    process.execPath,
    ["--no-node-snapshot", "--disable-warning=ExperimentalWarning", path.join(REPO_ROOT, "src/cli/main.ts"), "worker"],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, REWIND_SECRET_KEY: TEST_SECRET_KEY.toString("base64"), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start within 60 s:\n${output}`)), 60_000);
    const check = () => {
      if (output.includes("worker started")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stderr?.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code}:\n${output}`));
    });
  });
  return {
    child,
    output: () => output,
    async kill(signal = "SIGKILL") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** A worker process on a test stack's Temporal queue and state directory (`env` added to its environment). */
export function spawnStackWorker(stack: RewindStack, env: Record<string, string> = {}): Promise<WorkerProcess> {
  return spawnWorker({
    TEMPORAL_ADDRESS: stack.address,
    REWIND_TASK_QUEUE: stack.config.temporal.taskQueue,
    REWIND_STATE_DIR: stack.config.stateDir,
    ...env,
  });
}
