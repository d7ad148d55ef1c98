/**
 * An MCP server written with FastMCP, for the interop suite: many Python servers are made with it
 * rather than with the MCP SDK directly, and it writes the tools' schemas itself (from type hints,
 * docstrings and pydantic `Field`s). FastMCP is pinned and installed with pip once into
 * `.rewind/fastmcp-venv` (python-venv.ts); the fixture (test/fixtures/python/fastmcp_notes_server.py)
 * serves streamable HTTP on a free loopback port. `.ci/run` calls this file with `--install`
 * before the tests, so the one-time pip install is its own step.
 */
import path from "node:path";
import { getFreePort } from "../../src/dev/free-port.ts";
import { REPO_ROOT } from "./paths.ts";
import { waitForInitialize } from "./python-reference-servers.ts";
import { ensureVenv } from "./python-venv.ts";
import { startServerProcess } from "./server-process.ts";

export const FASTMCP_VERSION = "4.2.3";
const VENV = path.join(REPO_ROOT, ".rewind", "fastmcp-venv");
const FIXTURE = path.join(REPO_ROOT, "test", "fixtures", "python", "fastmcp_notes_server.py");

export interface FastMcpServer {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  /** The server's recent output, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/** Installs FastMCP unless it is there; returns the venv's python. */
export async function ensureFastMcp(log: (line: string) => void = () => {}): Promise<string> {
  return ensureVenv({
    name: "fastmcp",
    venvDir: VENV,
    requirements: [`fastmcp==${FASTMCP_VERSION}`],
    probe: "import importlib.metadata, fastmcp; print(importlib.metadata.version('fastmcp'))",
    expectedVersion: FASTMCP_VERSION,
    log,
  });
}

/** Starts the FastMCP notes server on a free loopback port and waits until it answers `initialize`. */
export async function startFastMcpServer(): Promise<FastMcpServer> {
  const python = await ensureFastMcp();
  const port = await getFreePort();
  const url = `http://127.0.0.1:${port}/mcp`;
  const server = startServerProcess(python, [FIXTURE, "--port", String(port)], {
    // A minimal environment: nothing of the test's reaches the server.
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", PYTHONDONTWRITEBYTECODE: "1" },
    graceMs: 5_000,
  });
  await waitForInitialize("the FastMCP notes server", server, url);
  return { url, output: server.output, stop: () => server.stop() };
}

if (import.meta.main && process.argv.includes("--install")) {
  const started = Date.now();
  ensureFastMcp(console.log).then(
    () => console.log(`fastmcp ${FASTMCP_VERSION} ready (${Math.round((Date.now() - started) / 1000)} s)`),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exit(1);
    },
  );
}
