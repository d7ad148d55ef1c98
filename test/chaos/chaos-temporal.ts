/**
 * The Temporal a chaos round runs on, behind one small interface: a dev server the round starts
 * on a SQLite file of its own (and restarts on it), or a cluster that is already there (`npm run
 * soak -- --temporal`, `npm run test:cluster`), which the round only connects to, restarts only
 * through the hook it was given, and never stops.
 */
import path from "node:path";
import { Client } from "@temporalio/client";
import { temporalSettings } from "../../src/config.ts";
import { getFreePort, loadDevServerConfig, startDevServer, type DevServer } from "../../src/dev/index.ts";
import { connectClient, connectionSettings } from "../../src/temporal/index.ts";
import { REPO_ROOT } from "../helpers/paths.ts";

/** An existing cluster: its settings, as every process of the round gets them. */
export interface ChaosCluster {
  /** TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE, and TLS or an API key as TEMPORAL_* settings. */
  env: Record<string, string>;
  /** Restarts the cluster's services on their database (the cluster script's `restart`); unset: no restarts. */
  restart?: () => Promise<void>;
}

export interface ChaosTemporal {
  address: string;
  namespace: string;
  /** What the round's workers and API get: the TEMPORAL_* settings of this Temporal. */
  env: Record<string, string>;
  /** True when the round owns the server: its state is the round's to keep or delete. */
  owned: boolean;
  /** Restarts the server with its state; undefined when the round cannot. */
  restart: (() => Promise<void>) | undefined;
  /** A client with the settings every process gets. */
  client(): Promise<Client>;
  /** Stops what the round started (nothing, on a cluster). */
  stop(): Promise<void>;
}

/** A dev server of the round's own, on `<dir>/temporal.sqlite` (log in `<dir>/temporal.log`). */
export async function devServerTemporal(cliPath: string, dir: string): Promise<ChaosTemporal> {
  const config = await loadDevServerConfig(path.join(REPO_ROOT, "temporal-dev.yml"));
  const port = await getFreePort();
  const start = () =>
    startDevServer({
      cliPath,
      config,
      port,
      uiPort: false,
      dbFile: path.join(dir, "temporal.sqlite"),
      logFile: path.join(dir, "temporal.log"),
    });
  let server: DevServer = await start();
  return {
    address: server.address,
    namespace: server.namespace,
    env: { TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: server.namespace },
    owned: true,
    async restart() {
      await server.stop();
      server = await start();
    },
    async client() {
      return new Client({ connection: await connectClient({ address: server.address }), namespace: server.namespace });
    },
    stop: () => server.stop(),
  };
}

/** A cluster that is already there: nothing is started or stopped. */
export function clusterTemporal(cluster: ChaosCluster): ChaosTemporal {
  const settings = temporalSettings(cluster.env, REPO_ROOT);
  if (!settings.address) throw new TypeError("a chaos cluster needs TEMPORAL_ADDRESS");
  const address = settings.address;
  return {
    address,
    namespace: settings.namespace,
    env: cluster.env,
    owned: false,
    restart: cluster.restart,
    async client() {
      return new Client({
        connection: await connectClient(connectionSettings(settings, address)),
        namespace: settings.namespace,
      });
    },
    stop: async () => undefined,
  };
}
