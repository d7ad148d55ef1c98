/**
 * Third-party MCP servers written in Python, for the interop suite: the reference `mcp-server-time`
 * and `mcp-server-git`, each a stdio server, reached over streamable HTTP through `mcp-proxy`, the
 * stdio bridge many users run in front of them. Both are pinned and installed with pip once into
 * venvs under `.rewind/` (python-venv.ts); the proxy has a venv of its own, because its pinned
 * MCP SDK and the servers' cannot share one. `.ci/run` calls this file with `--install` before the
 * tests, so the one-time pip install is its own step.
 *
 * The proxy binds the address it is given (127.0.0.1) and a free port; a test process that dies
 * leaves no proxy behind (server-process.ts).
 */
import path from "node:path";
import { getFreePort } from "../../src/dev/free-port.ts";
import { REPO_ROOT } from "./paths.ts";
import { ensureVenv } from "./python-venv.ts";
import { startServerProcess } from "./server-process.ts";
import { waitFor } from "./wait-for.ts";

export const REFERENCE_SERVERS_VERSION = "2026.10.19";
export const MCP_PROXY_VERSION = "0.13.0";
const SERVERS_VENV = path.join(REPO_ROOT, ".rewind", "reference-servers-venv");
const PROXY_VENV = path.join(REPO_ROOT, ".rewind", "mcp-proxy-venv");
const STARTUP_MS = 60_000;

export type ReferenceServer = "time" | "git";

/** Installs the servers and the proxy unless they are there; returns the venvs' bin folders. */
export async function ensureReferenceServers(
  log: (line: string) => void = () => {},
): Promise<{ servers: string; proxy: string }> {
  const [servers, proxy] = await Promise.all([
    ensureVenv({
      name: "python reference servers",
      venvDir: SERVERS_VENV,
      requirements: [`mcp-server-time==${REFERENCE_SERVERS_VERSION}`, `mcp-server-git==${REFERENCE_SERVERS_VERSION}`],
      probe:
        "import importlib.metadata, mcp_server_time, mcp_server_git; print(importlib.metadata.version('mcp-server-time'), importlib.metadata.version('mcp-server-git'))",
      expectedVersion: `${REFERENCE_SERVERS_VERSION} ${REFERENCE_SERVERS_VERSION}`,
      log,
    }),
    ensureVenv({
      name: "mcp-proxy",
      venvDir: PROXY_VENV,
      requirements: [`mcp-proxy==${MCP_PROXY_VERSION}`],
      probe: "import importlib.metadata, mcp_proxy; print(importlib.metadata.version('mcp-proxy'))",
      expectedVersion: MCP_PROXY_VERSION,
      log,
    }),
  ]);
  return { servers: path.dirname(servers), proxy: path.dirname(proxy) };
}

export interface ProxiedServer {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  /** The proxy's and the server's recent output, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `server` (with `args`) behind mcp-proxy on a free loopback port and waits until the proxy
 * answers an MCP `initialize`.
 */
export async function startProxiedServer(name: ReferenceServer, args: string[] = []): Promise<ProxiedServer> {
  const bins = await ensureReferenceServers();
  const port = await getFreePort();
  const base = `http://127.0.0.1:${port}`;
  const server = startServerProcess(
    path.join(bins.proxy, "mcp-proxy"),
    ["--host", "127.0.0.1", "--port", String(port), path.join(bins.servers, `mcp-server-${name}`), "--", ...args],
    // A minimal environment: nothing of the test's reaches the server.
    { env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "" }, graceMs: 5_000 },
  );
  const stop = () => server.stop();
  try {
    await waitFor(
      `mcp-proxy (mcp-server-${name}) to answer initialize on ${base}/mcp`,
      async () => {
        if (server.ended)
          throw new Error(
            `mcp-proxy exited (${server.child.exitCode ?? server.child.signalCode}) before answering on ${base}`,
          );
        const response = await fetch(`${base}/mcp`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "probe", version: "1" } },
          }),
          signal: AbortSignal.timeout(2_000),
        }).catch((error: unknown) => error);
        if (!(response instanceof Response)) return false;
        await response.body?.cancel();
        return response.ok;
      },
      { timeoutMs: STARTUP_MS },
    );
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}:\n${server.output()}`, { cause: error });
  }
  return { url: `${base}/mcp`, output: server.output, stop };
}

if (import.meta.main && process.argv.includes("--install")) {
  const started = Date.now();
  ensureReferenceServers(console.log).then(
    () =>
      console.log(
        `python reference servers ${REFERENCE_SERVERS_VERSION} and mcp-proxy ${MCP_PROXY_VERSION} ready (${Math.round((Date.now() - started) / 1000)} s)`,
      ),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exit(1);
    },
  );
}
