/**
 * Runs `temporal server start-dev` as a child process: the embedded default behind `npm start`
 * and the one server a test run shares. It owns the child's whole life — port checks before the
 * spawn, readiness before returning, the server's own log lines in the error when it dies early,
 * and a SIGTERM-then-SIGKILL stop (plus a kill on our exit, so no server outlives its parent).
 * A server on a SQLite file is recorded beside it, so one whose owner was killed outright is
 * stopped by the next start on that file (orphaned-server.ts).
 */

import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startDevArgs, type DevServerConfig } from "./dev-server-config.ts";
import { assertPortFree } from "./free-port.ts";
import { forgetServer, recordServer, stopOrphanedServer } from "./orphaned-server.ts";
import { waitForTemporal } from "./wait-for-temporal.ts";

export interface StartDevServerOptions {
  /** The `temporal` binary (see findOrInstallTemporalCli). */
  cliPath: string;
  config: DevServerConfig;
  /** Frontend gRPC port. Default `config.port`. */
  port?: number;
  /** Web UI port, or `false` for headless. Default `config.uiPort`. */
  uiPort?: number | false;
  /** SQLite file; `undefined` keeps all state in memory (pass `config.dbFile` to persist). */
  dbFile?: string | undefined;
  /** The Web UI's remote codec endpoint (`--ui-codec-endpoint`). Default: none. */
  codecEndpoint?: string | undefined;
  /** Appends the server's stdout and stderr here. Default: kept only for error messages. */
  logFile?: string | undefined;
  /** Receives Rewind's own status lines (not the server's log). */
  log?: (line: string) => void;
  /** How long to wait for the server to answer. Default 60 000 ms. */
  readyTimeoutMs?: number;
  /** How long `stop()` waits after SIGTERM before SIGKILL. Default 10 000 ms. */
  stopGraceMs?: number;
}

export interface DevServer {
  /** `host:port` of the frontend, for `Connection.connect({ address })`. */
  address: string;
  namespace: string;
  /** The Web UI, unless headless. */
  uiUrl?: string;
  /** Stops the server: SIGTERM, then SIGKILL after the grace period. Safe to call twice. */
  stop(): Promise<void>;
}

const TAIL_LINES = 40;

/** Spawns the dev server and resolves once its namespace answers. */
export async function startDevServer(options: StartDevServerOptions): Promise<DevServer> {
  const { config } = options;
  const port = options.port ?? config.port;
  const uiPort = options.uiPort ?? config.uiPort;
  if (options.dbFile !== undefined) await stopOrphanedServer(options.dbFile, (line) => options.log?.(line));
  await assertPortFree(port, config.ip, "Temporal gRPC");
  if (uiPort !== false) await assertPortFree(uiPort, config.ip, "Temporal Web UI");
  if (options.dbFile !== undefined) await mkdir(dirname(options.dbFile), { recursive: true });
  if (options.logFile !== undefined) await mkdir(dirname(options.logFile), { recursive: true });

  const args = startDevArgs(config, { port, uiPort, dbFile: options.dbFile, codecEndpoint: options.codecEndpoint });
  const logStream = options.logFile === undefined ? undefined : createWriteStream(options.logFile, { flags: "a" });
  const tail: string[] = [];
  const record = (chunk: Buffer): void => {
    logStream?.write(chunk);
    for (const line of chunk.toString("utf8").split("\n")) {
      if (line.trim() !== "") tail.push(line);
    }
    tail.splice(0, Math.max(0, tail.length - TAIL_LINES));
  };

  const child = spawn(options.cliPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.on("data", record);
  child.stderr.on("data", record);
  const exited = new Promise<string>((resolve) => {
    child.once("error", (error) => resolve(`could not run ${options.cliPath}: ${error.message}`));
    child.once("exit", (code, signal) => resolve(signal === null ? `exit code ${code}` : `signal ${signal}`));
  });
  let hasExited = false;
  let forget: (() => Promise<void>) | undefined;
  if (options.dbFile !== undefined && child.pid !== undefined) {
    const dbFile = options.dbFile;
    const recorded = recordServer(dbFile, child.pid).catch(() => undefined);
    forget = async () => {
      await recorded;
      await forgetServer(dbFile).catch(() => undefined);
    };
  }
  // Once the server is gone: its log closed and its record removed (what `stop` waits for).
  const cleanedUp = exited.then(async () => {
    hasExited = true;
    logStream?.end();
    await forget?.();
  });
  const killOnExit = (): void => {
    child.kill("SIGKILL");
  };
  process.once("exit", killOnExit);

  let stopping: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    stopping ??= (async () => {
      process.removeListener("exit", killOnExit);
      if (hasExited) return cleanedUp;
      child.kill("SIGTERM");
      const graceful = await Promise.race([exited.then(() => true), sleep(options.stopGraceMs ?? 10_000, false)]);
      if (!graceful) child.kill("SIGKILL");
      await cleanedUp;
    })();
    return stopping;
  };

  const host = config.ip.includes(":") ? `[${config.ip}]` : config.ip;
  const address = `${host}:${port}`;
  const started = Date.now();
  try {
    await waitForTemporal({
      address,
      namespace: config.namespace,
      timeoutMs: options.readyTimeoutMs ?? 60_000,
      exited,
    });
  } catch (error) {
    await stop();
    throw new Error(startFailure(options.cliPath, args, (error as Error).message, tail), { cause: error });
  }
  const uiUrl = uiPort === false ? undefined : `http://${host}:${uiPort}`;
  const where = uiUrl === undefined ? "headless" : `UI ${uiUrl}`;
  const storage = options.dbFile ?? "in memory";
  options.log?.(`Temporal dev server at ${address} (${where}, ${storage}) ready in ${Date.now() - started} ms`);
  const server: DevServer = { address, namespace: config.namespace, stop };
  if (uiUrl !== undefined) server.uiUrl = uiUrl;
  return server;
}

function startFailure(cliPath: string, args: string[], reason: string, tail: string[]): string {
  const busy = tail.some((line) => /address already in use/i.test(line))
    ? "\nA port it needs is already in use: stop the other process or change the ports in temporal-dev.yml."
    : "";
  const output =
    tail.length === 0 ? " (it printed nothing)" : `; its last output:\n${tail.map((l) => `    ${l}`).join("\n")}`;
  return `Temporal dev server failed to start: ${reason}.${busy}\nCommand: ${cliPath} ${args.join(" ")}${output}`;
}
