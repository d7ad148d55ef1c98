/**
 * `rewind dev` (what `npm start` runs): the whole stack in one process tree. Unless
 * TEMPORAL_ADDRESS points at a cluster, it finds or installs the temporal CLI and starts a dev
 * server on the SQLite file under the state dir, so runs survive a restart; then the worker and
 * the API. Ctrl-C stops the API, drains the worker and stops the server, in that order; so does
 * the end of the `npm start` that launched it, however it ended.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Config } from "../config.ts";
import { findOrInstallTemporalCli, loadDevServerConfig, startDevServer, type DevServer } from "../dev/index.ts";
import type { Logger } from "../shared/index.ts";
import { connectClient, setupNamespace } from "../temporal/index.ts";
import { startApi } from "./start-api.ts";
import { startWorker } from "./start-worker.ts";
import { onStopSignal, stopWhenLauncherDies } from "./stop-signals.ts";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * Where the dev server's Web UI sends payloads to be decoded: the API's codec routes, at the URL
 * a browser reaches the API at (the API starts after the server, so its port must be fixed).
 */
function codecEndpointOf(config: Config): string | undefined {
  let url: URL;
  try {
    url = new URL(config.api.publicUrl);
  } catch {
    return undefined;
  }
  if (url.port === "0") return undefined;
  return `${config.api.publicUrl.replace(/\/+$/, "")}/v1/codec`;
}

/**
 * The embedded server sets itself up, as `rewind setup` does a cluster: the dev server registers
 * temporal-dev.yml's search attributes when it creates its SQLite file, not those a later release
 * added, and the worker and the API would refuse to start without them.
 */
async function setUpEmbedded(address: string, namespace: string, logger: Logger): Promise<void> {
  const connection = await connectClient({ address });
  try {
    const report = await setupNamespace(connection, { namespace, address, retentionDays: 30 });
    for (const step of report.steps) if (/: (created|registered)/.test(step)) logger.info(`dev server: ${step}`);
  } finally {
    await connection.close();
  }
}

export async function runDev(config: Config, logger: Logger): Promise<void> {
  let server: DevServer | undefined;
  let address = config.temporal.address;
  let uiUrl = config.temporal.uiUrl;
  if (!address) {
    const cliPath = await findOrInstallTemporalCli({
      explicitPath: config.temporal.cliPath,
      stateDir: config.stateDir,
      log: (line) => logger.info(line),
    });
    const devConfig = await loadDevServerConfig(path.join(REPO_ROOT, "temporal-dev.yml"));
    server = await startDevServer({
      cliPath,
      config: devConfig,
      dbFile: devConfig.dbFile,
      codecEndpoint: codecEndpointOf(config),
      logFile: path.join(config.stateDir, "temporal.log"),
      log: (line) => logger.info(line),
    });
    address = server.address;
    uiUrl ??= server.uiUrl;
  }
  let worker: Awaited<ReturnType<typeof startWorker>> | undefined;
  let workerDone: Promise<void> | undefined;
  let api: Awaited<ReturnType<typeof startApi>>;
  try {
    if (server) await setUpEmbedded(address, config.temporal.namespace, logger);
    worker = await startWorker(config, address, logger);
    workerDone = worker.run();
    // One process: the API starts runs eagerly on the worker's connection, their first step taken in its sandbox.
    api = await startApi(config, address, uiUrl, logger, { worker });
  } catch (error) {
    // Nothing may outlive a failed start: the server and the worker would keep this process alive.
    await worker?.shutdown().catch(() => undefined);
    await workerDone?.catch(() => undefined);
    await server?.stop();
    throw error;
  }
  const started = worker;

  process.stdout.write(
    [
      "",
      `  Rewind API     ${api.url}`,
      `  Console        ${api.url}/ui`,
      `  Temporal UI    ${uiUrl ?? "(not available for this cluster)"}`,
      `  Temporal       ${address}${server ? " (dev server, state in " + path.relative(process.cwd(), config.stateDir) + ")" : ""}`,
      "",
      `  Try: curl -s -X POST ${api.url}/v1/runs -H 'content-type: application/json' \\`,
      `         -d '{"script":"export default async (i: {n: number}) => i.n * 2","input":{"n":21}}'`,
      "",
    ].join("\n") + "\n",
  );

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info(`received ${signal}, stopping`);
    await api.stop().catch((error: unknown) => logger.error("API stop failed", { error: String(error) }));
    await started.shutdown().catch((error: unknown) => logger.error("worker stop failed", { error: String(error) }));
    await server?.stop();
    logger.info("stopped");
  };
  onStopSignal((signal) => void stop(signal));
  // `npm start` killed outright (SIGKILL) must not leave the stack running without it.
  if (config.launchedByNpmScript)
    stopWhenLauncherDies((pid) =>
      logger.warn(`the npm process that started this stack (pid ${pid}) is gone: stopping`),
    );
  try {
    await workerDone;
  } finally {
    if (!stopping) await stop("worker exit");
  }
}
