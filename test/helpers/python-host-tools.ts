/**
 * The Python host-tool worker of examples/python-host-tools/, for the interop suite: host tools
 * are a Temporal activity contract (docs/host-tools.md), so a harness written with Temporal's
 * Python SDK must be served as well as one written with ours. The SDK (`temporalio` on PyPI,
 * pinned in the example's requirements.txt, the one place its version is written) is installed
 * once into `.rewind/temporalio-venv`, and the worker is started per test file as a child process
 * that prints one JSON line per event (ready, each attempt, a cancellation).
 *
 * `.ci/run` calls this file with `--install` before the tests, so the one-time pip install is its
 * own step and not a timed-out test hook; `startPythonHostWorker` installs on demand too.
 *
 * Usage: node test/helpers/python-host-tools.ts --install
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "./paths.ts";
import { ensureVenv } from "./python-venv.ts";
import { waitFor } from "./wait-for.ts";

export const EXAMPLE_DIR = path.join(REPO_ROOT, "examples", "python-host-tools");
const REQUIREMENTS_FILE = path.join(EXAMPLE_DIR, "requirements.txt");
const VENV = path.join(REPO_ROOT, ".rewind", "temporalio-venv");
const STARTUP_MS = 60_000;

/** The version requirements.txt pins (`temporalio==X`). */
export function pinnedTemporalioVersion(): string {
  const pin = /^temporalio==(\S+)\s*$/m.exec(readFileSync(REQUIREMENTS_FILE, "utf8"));
  if (!pin?.[1]) throw new Error(`${REQUIREMENTS_FILE} does not pin temporalio==<version>`);
  return pin[1];
}

/** Installs the example's requirements into `.rewind/temporalio-venv` unless they are there; returns its python. */
export async function ensurePythonTemporal(log: (line: string) => void = () => {}): Promise<string> {
  return ensureVenv({
    name: "python temporalio",
    venvDir: VENV,
    requirements: ["-r", REQUIREMENTS_FILE],
    probe: "import importlib.metadata, temporalio.worker; print(importlib.metadata.version('temporalio'))",
    expectedVersion: pinnedTemporalioVersion(),
    log,
  });
}

/** One line the worker printed: `{"event": "ready" | "attempt" | "cancelled", …}`. */
export interface WorkerEvent {
  event: string;
  tool?: string;
  key?: string;
  attempt?: number;
  traceparent?: string | null;
  [field: string]: unknown;
}

export interface PythonHostWorker {
  /** Every event printed so far, in order. */
  events: WorkerEvent[];
  /** The worker's recent stderr and unparsed stdout, for failure messages. */
  output(): string;
  /** Waits until an event matches. */
  waitForEvent(what: string, match: (event: WorkerEvent) => boolean, timeoutMs?: number): Promise<WorkerEvent>;
  stop(): Promise<void>;
}

/** Starts examples/python-host-tools/worker.py on `taskQueue` and waits until it polls. */
export async function startPythonHostWorker(options: {
  address: string;
  taskQueue: string;
  namespace?: string;
}): Promise<PythonHostWorker> {
  const python = await ensurePythonTemporal((line) => console.log(line));
  const args = [path.join(EXAMPLE_DIR, "worker.py"), "--address", options.address, "--task-queue", options.taskQueue];
  if (options.namespace) args.push("--namespace", options.namespace);
  const child = spawn(python, args, {
    env: { PATH: process.env["PATH"] ?? "", PYTHONUNBUFFERED: "1", PYTHONDONTWRITEBYTECODE: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const events: WorkerEvent[] = [];
  let output = "";
  let pending = "";
  const keep = (text: string) => {
    output = (output + text).slice(-8_000);
  };
  child.stdout.on("data", (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      try {
        events.push(JSON.parse(line) as WorkerEvent);
      } catch {
        keep(`${line}\n`);
      }
    }
  });
  child.stderr.on("data", (chunk: Buffer) => keep(chunk.toString()));

  const waitForEvent: PythonHostWorker["waitForEvent"] = async (what, match, timeoutMs = 30_000) => {
    try {
      return await waitFor(
        `the python worker: ${what}`,
        () => {
          if (child.exitCode !== null || child.signalCode !== null)
            throw new Error(`the python worker exited (${child.exitCode ?? child.signalCode})`);
          return events.find(match);
        },
        { timeoutMs, intervalMs: 50 },
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}:\n${output}`, { cause: error });
    }
  };

  const stop = async () => {
    process.removeListener("exit", killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(killer);
  };

  try {
    await waitForEvent("ready", (event) => event.event === "ready", STARTUP_MS);
  } catch (error) {
    await stop();
    throw error;
  }
  return { events, output: () => output, waitForEvent, stop };
}

if (import.meta.main && process.argv.includes("--install")) {
  try {
    const started = Date.now();
    const python = await ensurePythonTemporal((line) => process.stderr.write(`${line}\n`));
    process.stderr.write(
      `python temporalio ${pinnedTemporalioVersion()} ready (${Math.round((Date.now() - started) / 1000)} s)\n`,
    );
    process.stdout.write(`${python}\n`);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
