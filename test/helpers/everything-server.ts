/**
 * Runs the reference MCP server, `@modelcontextprotocol/server-everything`, in streamable HTTP
 * mode as a child process (`dist/index.js streamableHttp`, port from the PORT variable, endpoint
 * `/mcp`), so the client is tested against a server written by someone else.
 *
 * The server calls `app.listen(PORT)`, which binds every interface; a preloaded module pins its
 * listening sockets to 127.0.0.1, because tests stay on loopback. It gets a minimal environment:
 * one of its tools (`get-env`) returns the whole environment to any caller.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { getFreePort } from "../../src/dev/free-port.ts";
import { LOOPBACK_ONLY } from "./loopback-listen.ts";

export interface EverythingServer {
  url: string;
  close(): Promise<void>;
}

const STARTUP_MS = 30_000;

export async function startEverythingServer(): Promise<EverythingServer> {
  const entry = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/dist/index.js");
  const port = await getFreePort();
  const child = spawn(process.execPath, ["--import", LOOPBACK_ONLY, entry, "streamableHttp"], {
    env: { PORT: String(port), PATH: process.env.PATH ?? "", NODE_ENV: "test" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error(`server-everything did not start within ${STARTUP_MS} ms:\n${output}`)),
      STARTUP_MS,
    );
    const onOutput = () => {
      if (output.includes("listening on port")) done();
    };
    const onExit = (code: number | null) => fail(new Error(`server-everything exited with ${code}:\n${output}`));
    function cleanup() {
      clearTimeout(timer);
      child.stderr.off("data", onOutput);
      child.off("exit", onExit);
    }
    function done() {
      cleanup();
      resolve();
    }
    function fail(error: Error) {
      cleanup();
      child.kill("SIGKILL");
      reject(error);
    }
    child.stderr.on("data", onOutput);
    child.once("exit", onExit);
  });

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 3_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
