/**
 * An MCP server written with the official Python SDK, for the interop suite: the client must work
 * against servers it was not written with. The SDK (`mcp` on PyPI, v2) is installed once into
 * `.rewind/mcp-venv` the way moto goes into `.rewind/moto-venv`, and the fixture
 * (test/fixtures/python/mcp_server.py, which records how the SDK sends server-to-client requests)
 * is started per test on a free loopback port, in streamable HTTP mode, stateful or stateless,
 * answering with SSE streams or JSON bodies.
 *
 * `.ci/run` calls this file with `--install` before the tests, so the one-time pip install is its
 * own step and not a timed-out test hook; `startPythonMcpServer` installs on demand too.
 *
 * Usage: node test/helpers/python-mcp.ts --install
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import path from "node:path";
import type { Readable } from "node:stream";
import { waitFor } from "./wait-for.ts";
import { getFreePort } from "../../src/dev/free-port.ts";
import { REPO_ROOT } from "./paths.ts";
import { ensureVenv } from "./python-venv.ts";

export const PYTHON_MCP_VERSION = "2.3.0";
const REQUIREMENTS = [`mcp==${PYTHON_MCP_VERSION}`];
const VENV = path.join(REPO_ROOT, ".rewind", "mcp-venv");
const FIXTURE = path.join(REPO_ROOT, "test", "fixtures", "python", "mcp_server.py");
const STARTUP_MS = 60_000;

/** Installs the Python MCP SDK into `.rewind/mcp-venv` unless it is there already; returns the venv's python. */
export async function ensurePythonMcp(log: (line: string) => void = () => {}): Promise<string> {
  return ensureVenv({
    name: "python mcp",
    venvDir: VENV,
    requirements: REQUIREMENTS,
    probe: "import importlib.metadata, mcp.server, uvicorn; print(importlib.metadata.version('mcp'))",
    expectedVersion: PYTHON_MCP_VERSION,
    log,
  });
}

export interface PythonMcpServerOptions {
  /** A fresh connection per POST, no sessions and no GET stream. Default false (stateful). */
  stateless?: boolean;
  /** Answer each POST with one JSON body instead of an SSE stream. Default false (SSE). */
  jsonResponse?: boolean;
  /** Listen on this port; default: a free one. */
  port?: number;
}

export interface PythonMcpServer {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  port: number;
  /** The server's recent stdout and stderr, for failure messages. */
  output(): string;
  /** Kills the server (SIGKILL) and starts it again on the same port: every session is lost, as in a real restart. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

type Child = ChildProcessByStdio<null, Readable, Readable>;

interface Running {
  child: Child;
  exited: Promise<void>;
  output: () => string;
}

function spawnServer(python: string, port: number, options: PythonMcpServerOptions): Running {
  const args = [FIXTURE, "--port", String(port)];
  if (options.stateless) args.push("--stateless");
  if (options.jsonResponse) args.push("--json-response");
  const child = spawn(python, args, {
    env: { PATH: process.env["PATH"] ?? "", PYTHONUNBUFFERED: "1", PYTHONDONTWRITEBYTECODE: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8_000);
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return { child, exited, output: () => output };
}

async function stopChild({ child, exited }: Running, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  const killer = setTimeout(() => child.kill("SIGKILL"), 3_000);
  await exited;
  clearTimeout(killer);
}

async function waitUntilAnswering(running: Running, base: string): Promise<void> {
  try {
    await waitFor(
      `python MCP server to answer on ${base}`,
      async () => {
        const { child } = running;
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(
            `python MCP server exited (${child.exitCode ?? child.signalCode}) before answering on ${base}`,
          );
        }
        // Refused until it listens.
        const response = await fetch(`${base}/health`, { signal: AbortSignal.timeout(2_000) }).catch(
          (error: unknown) => error,
        );
        if (!(response instanceof Response)) return false;
        await response.body?.cancel();
        return response.ok;
      },
      { timeoutMs: STARTUP_MS },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}:\n${running.output()}`, { cause: error });
  }
}

// Checking the install imports the SDK (most of a second): once per process is enough.
let installed: Promise<string> | undefined;

/** Starts the fixture server on a free loopback port and waits until it answers. */
export async function startPythonMcpServer(options: PythonMcpServerOptions = {}): Promise<PythonMcpServer> {
  installed ??= ensurePythonMcp((line) => console.log(line));
  installed.catch(() => {
    installed = undefined;
  });
  const python = await installed;
  const port = options.port ?? (await getFreePort());
  const base = `http://127.0.0.1:${port}`;
  let running = spawnServer(python, port, options);
  const killOnExit = () => {
    running.child.kill("SIGKILL");
  };
  process.once("exit", killOnExit);

  const start = async () => {
    try {
      await waitUntilAnswering(running, base);
    } catch (error) {
      await stopChild(running);
      process.removeListener("exit", killOnExit);
      throw error;
    }
  };
  await start();

  return {
    url: `${base}/mcp`,
    port,
    output: () => running.output(),
    async restart() {
      // Killed, as a crash would: a graceful stop waits for the clients' open streams.
      await stopChild(running, "SIGKILL");
      running = spawnServer(python, port, options);
      await start();
    },
    async stop() {
      process.removeListener("exit", killOnExit);
      await stopChild(running);
    },
  };
}

if (import.meta.main && process.argv.includes("--install")) {
  try {
    const started = Date.now();
    const python = await ensurePythonMcp((line) => process.stderr.write(`${line}\n`));
    process.stderr.write(`python mcp ${PYTHON_MCP_VERSION} ready (${Math.round((Date.now() - started) / 1000)} s)\n`);
    process.stdout.write(`${python}\n`);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
