/**
 * One Rewind stack (a worker and two APIs: the main one beside the worker, as `npm start` runs it,
 * the other with a connection of its own and a low continue-as-new threshold)
 * run from the source tree given as `--root`: today's checkout, or a worktree of an earlier
 * release with its own node_modules. It imports only the tree's own modules, by path, so the
 * release under test runs its own code and its own SDK versions. The worker's http tool maps
 * `--http-host` to loopback, as the tests' seam allows. Prints one JSON line with the API URLs
 * when ready and stops on SIGTERM.
 *
 * Environment: TEMPORAL_ADDRESS, REWIND_TASK_QUEUE, REWIND_SECRET_KEY, REWIND_STATE_DIR.
 */
import { existsSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { root: { type: "string" }, "http-host": { type: "string" } } });
const root = path.resolve(values.root ?? ".");
const httpHost = values["http-host"] ?? "api.test";

type Env = Record<string, string | undefined>;
interface Logger {
  debug(m: string): void;
  info(m: string): void;
  warn(m: string): void;
  error(m: string): void;
}
interface ConfigShape {
  stateDir: string;
  temporal: { address: string | undefined; namespace: string; taskQueue: string };
  sandbox: unknown;
  warmIsolates: number;
  events: unknown;
  api: { publicUrl: string };
  payloads?: unknown;
}
interface StackModules {
  loadConfig(env: Env, cwd: string): ConfigShape;
  startApi(
    config: ConfigShape,
    address: string,
    uiUrl: undefined,
    logger: Logger,
    options?: { worker?: unknown },
  ): Promise<{ url: string; stop(): Promise<void> }>;
  createRewindWorker(options: Record<string, unknown>): Promise<{ run(): Promise<void>; shutdown(): Promise<void> }>;
  resolveSecretKey(config: ConfigShape): Promise<Buffer>;
  installTemporalRuntime(logger: Logger, level: string): void;
}

const load = async (file: string): Promise<Record<string, unknown>> =>
  (await import(pathToFileURL(path.join(root, file)).href)) as Record<string, unknown>;

/** The first of `files` the tree has: a module that moved is found where its release kept it. */
const loadFirst = (...files: string[]): Promise<Record<string, unknown>> =>
  load(files.find((file) => existsSync(path.join(root, file))) ?? files[0]!);

async function modules(): Promise<StackModules> {
  const [config, api, worker, key, runtime] = await Promise.all([
    load("src/config.ts"),
    load("src/cli/start-api.ts"),
    load("src/worker/create-worker.ts"),
    load("src/credentials/secret-key.ts"),
    loadFirst("src/temporal/temporal-runtime.ts", "src/worker/temporal-runtime.ts"),
  ]);
  return {
    loadConfig: config["loadConfig"] as StackModules["loadConfig"],
    startApi: api["startApi"] as StackModules["startApi"],
    createRewindWorker: worker["createRewindWorker"] as StackModules["createRewindWorker"],
    resolveSecretKey: key["resolveSecretKey"] as StackModules["resolveSecretKey"],
    installTemporalRuntime: runtime["installTemporalRuntime"] as StackModules["installTemporalRuntime"],
  };
}

const quiet: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (m) => process.stderr.write(`${m}\n`),
};

/** A loopback port nothing listens on: the main API's, known before the worker that links to it starts. */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

const m = await modules();
const env: Env = { ...process.env, REWIND_PORT: "0" };
const config = m.loadConfig({ ...env, REWIND_HOST: "127.0.0.1", REWIND_PORT: String(await freePort()) }, root);
const withCan = m.loadConfig({ ...env, REWIND_CONTINUE_AS_NEW_EVENTS: "60" }, root);
const address = config.temporal.address ?? "";
m.installTemporalRuntime(quiet, "ERROR");
// The continue-as-new API has a connection of its own: its runs start the ordinary way.
const canApi = await m.startApi(withCan, address, undefined, quiet);
const worker = await m.createRewindWorker({
  address,
  namespace: config.temporal.namespace,
  taskQueue: config.temporal.taskQueue,
  sandbox: config.sandbox,
  warmIsolates: config.warmIsolates,
  cacheDir: path.join(config.stateDir, "cache"),
  secretKey: await m.resolveSecretKey(config),
  events: config.events,
  publicUrl: config.api.publicUrl,
  // Releases that keep large payloads outside history read where the stack's config says.
  payloads: config.payloads,
  httpTool: {
    allowLoopbackForTests: true,
    resolve: async (hostname: string) => {
      if (hostname.replace(/\.$/, "") !== httpHost)
        throw Object.assign(new Error(`no test answer for ${hostname}`), { code: "ENOTFOUND" });
      return [{ address: "127.0.0.1", family: net.isIPv6("127.0.0.1") ? 6 : 4 }];
    },
  },
});
const running = worker.run();
// As `npm start` runs it: beside the worker (releases that know the option start runs eagerly,
// their first step carried in their input; earlier ones ignore it).
const mainApi = await m.startApi(config, address, undefined, quiet, { worker });
process.stdout.write(`${JSON.stringify({ api: mainApi.url, continueAsNewApi: canApi.url })}\n`);

let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  await Promise.all([mainApi.stop(), canApi.stop()]);
  await worker.shutdown();
  await running;
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
await running.catch((error: unknown) => {
  process.stderr.write(`worker failed: ${String(error)}\n`);
  process.exit(1);
});
