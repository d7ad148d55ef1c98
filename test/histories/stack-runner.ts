/**
 * Starts and stops `stack-process.ts` for a source tree (today's checkout or a release's
 * worktree) against a given Temporal server, and the dev server the recorder and the upgrade
 * test share. Kept apart so both drivers start stacks the same way.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import {
  findOrInstallTemporalCli,
  loadDevServerConfig,
  startDevServer,
  startOnFreePort,
  type DevServer,
} from "../../src/dev/index.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { TEST_SECRET_KEY } from "../helpers/secret-key.ts";
import { HTTP_HOST_NAME } from "./world.ts";

export interface StackHandle {
  api: string;
  continueAsNewApi: string;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface StackProcessOptions {
  /** The source tree whose code runs (it must have its node_modules). */
  root: string;
  temporalAddress: string;
  taskQueue: string;
  stateDir: string;
  /** Where the stack keeps payloads over the threshold (default: under the state dir). */
  payloadDir?: string;
}

export async function startStackProcess(options: StackProcessOptions): Promise<StackHandle> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      "--no-node-snapshot",
      "--disable-warning=ExperimentalWarning",
      path.join(REPO_ROOT, "test/histories/stack-process.ts"),
      "--root",
      options.root,
      "--http-host",
      HTTP_HOST_NAME,
    ],
    {
      cwd: options.root,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: options.temporalAddress,
        REWIND_TASK_QUEUE: options.taskQueue,
        REWIND_SECRET_KEY: TEST_SECRET_KEY.toString("base64"),
        REWIND_STATE_DIR: options.stateDir,
        ...(options.payloadDir ? { REWIND_PAYLOAD_STORE: `file:${options.payloadDir}` } : {}),
        REWIND_LOG_LEVEL: "error",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = await new Promise<{ api: string; continueAsNewApi: string }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the stack of ${options.root} did not start within 120 s:\n${output}`)),
      120_000,
    );
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once("line", (line) => {
      clearTimeout(timer);
      resolve(JSON.parse(line) as { api: string; continueAsNewApi: string });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the stack of ${options.root} exited with ${code}:\n${output}`));
    });
  });
  return {
    ...ready,
    output: () => output,
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** A headless dev server with the project's settings; in memory unless `dbFile` is given. */
export async function startTestTemporal(dbFile?: string): Promise<DevServer> {
  const log = (line: string): void => {
    process.stderr.write(`[temporal] ${line}\n`);
  };
  const cliPath = await findOrInstallTemporalCli({ stateDir: path.join(REPO_ROOT, ".rewind"), log });
  const config = await loadDevServerConfig(path.join(REPO_ROOT, "temporal-dev.yml"));
  return startOnFreePort(async (port) =>
    startDevServer({ cliPath, config, port, uiPort: false, dbFile, log: () => undefined }),
  );
}

/**
 * The same dev server started again on the port it had (`host:port` of its address) and its
 * SQLite file: the upgrade test restarts Temporal under open runs, and workers find it where it was.
 */
export async function restartTestTemporal(address: string, dbFile: string): Promise<DevServer> {
  const log = (line: string): void => {
    process.stderr.write(`[temporal] ${line}\n`);
  };
  const cliPath = await findOrInstallTemporalCli({ stateDir: path.join(REPO_ROOT, ".rewind"), log });
  const config = await loadDevServerConfig(path.join(REPO_ROOT, "temporal-dev.yml"));
  const port = Number(address.slice(address.lastIndexOf(":") + 1));
  return startDevServer({ cliPath, config, port, uiPort: false, dbFile, log: () => undefined });
}
