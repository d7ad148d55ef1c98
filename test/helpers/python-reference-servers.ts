/**
 * Third-party MCP servers written in Python, for the interop suite: the reference `mcp-server-time`
 * and `mcp-server-git`, and `mcp-server-sqlite`, each a stdio server, reached over streamable HTTP
 * through `mcp-proxy`, the stdio bridge many users run in front of them. All are pinned and
 * installed with pip once into venvs under `.rewind/` (python-venv.ts); the proxy has a venv of its
 * own, because its pinned MCP SDK and the servers' cannot share one, and so has sqlite: its last
 * release asks for any `mcp` and does not start on the SDK's 2.x (its `Server` has no
 * `list_resources` decorator), so it gets the last 1.x. `.ci/run` calls this file with `--install`
 * before the tests, so the one-time pip install is its own step.
 *
 * The proxy binds the address it is given (127.0.0.1) and a free port; a test process that dies
 * leaves no proxy behind (server-process.ts).
 */
import path from "node:path";
import { getFreePort } from "../../src/dev/free-port.ts";
import { REPO_ROOT } from "./paths.ts";
import { ensureVenv } from "./python-venv.ts";
import { startServerProcess, type ServerProcess } from "./server-process.ts";
import { waitFor } from "./wait-for.ts";

export const REFERENCE_SERVERS_VERSION = "2026.10.19";
export const MCP_PROXY_VERSION = "0.13.0";
export const SQLITE_SERVER_VERSION = "2025.4.25";
const SQLITE_MCP_VERSION = "1.30.0";
const SERVERS_VENV = path.join(REPO_ROOT, ".rewind", "reference-servers-venv");
const SQLITE_VENV = path.join(REPO_ROOT, ".rewind", "sqlite-server-venv");
const PROXY_VENV = path.join(REPO_ROOT, ".rewind", "mcp-proxy-venv");
const STARTUP_MS = 60_000;

export type ReferenceServer = "time" | "git" | "sqlite";

/** Installs the servers and the proxy unless they are there; returns the venvs' bin folders. */
export async function ensureReferenceServers(
  log: (line: string) => void = () => {},
): Promise<{ servers: string; sqlite: string; proxy: string }> {
  const [servers, sqlite, proxy] = await Promise.all([
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
      name: "mcp-server-sqlite",
      venvDir: SQLITE_VENV,
      requirements: [`mcp-server-sqlite==${SQLITE_SERVER_VERSION}`, `mcp==${SQLITE_MCP_VERSION}`],
      probe:
        "import importlib.metadata, mcp_server_sqlite; print(importlib.metadata.version('mcp-server-sqlite'), importlib.metadata.version('mcp'))",
      expectedVersion: `${SQLITE_SERVER_VERSION} ${SQLITE_MCP_VERSION}`,
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
  return { servers: path.dirname(servers), sqlite: path.dirname(sqlite), proxy: path.dirname(proxy) };
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
    [
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      path.join(name === "sqlite" ? bins.sqlite : bins.servers, `mcp-server-${name}`),
      "--",
      ...args,
    ],
    // A minimal environment: nothing of the test's reaches the server.
    { env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "" }, graceMs: 5_000 },
  );
  await waitForInitialize(`mcp-proxy (mcp-server-${name})`, server, `${base}/mcp`);
  return { url: `${base}/mcp`, output: server.output, stop: () => server.stop() };
}

/**
 * Waits until the server process answers an MCP `initialize` at `url`; stops it and fails with its
 * output when it exits first or does not answer within a minute.
 */
export async function waitForInitialize(name: string, server: ServerProcess, url: string): Promise<void> {
  try {
    await waitFor(
      `${name} to answer initialize on ${url}`,
      async () => {
        if (server.ended)
          throw new Error(`${name} exited (${server.child.exitCode ?? server.child.signalCode}) before answering`);
        const response = await fetch(url, {
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
    await server.stop();
    throw new Error(`${(error as Error).message}:\n${server.output()}`, { cause: error });
  }
}

if (import.meta.main && process.argv.includes("--install")) {
  const started = Date.now();
  ensureReferenceServers(console.log).then(
    () =>
      console.log(
        `python reference servers ${REFERENCE_SERVERS_VERSION}, mcp-server-sqlite ${SQLITE_SERVER_VERSION} and mcp-proxy ${MCP_PROXY_VERSION} ready (${Math.round((Date.now() - started) / 1000)} s)`,
      ),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exit(1);
    },
  );
}
