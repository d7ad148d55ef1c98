/**
 * A Temporal dev server of a test's own that can be stopped and started again on the same port
 * with the same state (its SQLite file in a temporary folder), for tests of what Rewind does
 * while Temporal is gone. The shared server of the test run must never be stopped.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { inject } from "vitest";
import { getFreePort, loadDevServerConfig, startDevServer, type DevServer } from "../../src/dev/index.ts";
import { REPO_ROOT } from "./paths.ts";

export interface RestartableTemporal {
  /** `host:port`, the same across restarts. */
  address: string;
  stop(): Promise<void>;
  /** Starts the server again on the same port and SQLite file; resolves once it answers. */
  start(): Promise<void>;
  /** Stops it and removes its state. */
  dispose(): Promise<void>;
}

export async function startRestartableTemporal(): Promise<RestartableTemporal> {
  const dir = await mkdtemp(path.join(tmpdir(), "rewind-temporal-"));
  const config = await loadDevServerConfig(path.join(REPO_ROOT, "temporal-dev.yml"));
  const port = await getFreePort();
  const launch = () =>
    startDevServer({
      cliPath: inject("temporalCliPath"),
      config,
      port,
      uiPort: false,
      dbFile: path.join(dir, "temporal.sqlite"),
      logFile: path.join(dir, "temporal.log"),
    });
  let server: DevServer | undefined = await launch();
  const address = server.address;
  return {
    address,
    async stop() {
      await server?.stop();
      server = undefined;
    },
    async start() {
      if (server) throw new Error(`the Temporal dev server at ${address} is already running`);
      server = await launch();
    },
    async dispose() {
      await server?.stop();
      server = undefined;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
