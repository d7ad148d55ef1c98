/**
 * A stdio MCP server behind `supergateway` (stdio → streamable HTTP), for the interop suite: many
 * servers only speak stdio and reach Rewind through such a bridge, whose HTTP side is written by
 * neither the server's authors nor us. By default the bridged server is the reference
 * `server-everything` in its stdio mode (`dist/index.js stdio`).
 *
 * Stateful by default (`--stateful`: one child process per MCP session, as users run it);
 * stateless, supergateway starts a child per POST. The gateway calls `app.listen(port)`, which
 * binds every interface; a preloaded module pins it to 127.0.0.1, because tests stay on loopback.
 * Its stdin stays open: supergateway shuts down (and stops its children) when stdin closes, so
 * closing it is how `stop` ends it, and a test process that dies takes the gateway with it.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { waitFor } from "./wait-for.ts";
import { getFreePort } from "../../src/dev/free-port.ts";
import { LOOPBACK_ONLY } from "./loopback-listen.ts";

export interface StdioGatewayOptions {
  /** The shell command of the stdio server; default: server-everything's stdio mode. */
  command?: string;
  /** One child per session (true) or per POST (false). Default true. */
  stateful?: boolean;
}

export interface StdioGateway {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  /** The gateway's recent output, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

const STARTUP_MS = 30_000;
const require = createRequire(import.meta.url);
const shellQuote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

/** server-everything in stdio mode, as the shell command supergateway runs. */
export function everythingStdioCommand(): string {
  const entry = require.resolve("@modelcontextprotocol/server-everything/dist/index.js");
  return [process.execPath, entry, "stdio"].map(shellQuote).join(" ");
}

/** Starts supergateway around a stdio server on a free loopback port and waits until it answers. */
export async function startStdioGateway(options: StdioGatewayOptions = {}): Promise<StdioGateway> {
  const gateway = require.resolve("supergateway/dist/index.js");
  const port = await getFreePort();
  const base = `http://127.0.0.1:${port}`;
  const args = [
    "--import",
    LOOPBACK_ONLY,
    gateway,
    "--stdio",
    options.command ?? everythingStdioCommand(),
    "--outputTransport",
    "streamableHttp",
    "--port",
    String(port),
    "--healthEndpoint",
    "/healthz",
    ...(options.stateful === false ? [] : ["--stateful"]),
  ];
  // A minimal environment: server-everything's `get-env` tool returns it to any caller.
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env["PATH"] ?? "", NODE_ENV: "test" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8_000);
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin.end();
    child.kill("SIGTERM");
    // supergateway gives its children 5 s to go before it signals them harder.
    const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(killer);
  };

  try {
    await waitFor(
      `supergateway to answer on ${base}`,
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`supergateway exited (${child.exitCode ?? child.signalCode}) before answering on ${base}`);
        }
        // Refused until it listens.
        const response = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) }).catch(
          (error: unknown) => error,
        );
        if (!(response instanceof Response)) return false;
        await response.body?.cancel();
        return response.ok;
      },
      { timeoutMs: STARTUP_MS },
    );
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}:\n${output}`, { cause: error });
  }
  return { url: `${base}/mcp`, output: () => output, stop };
}
