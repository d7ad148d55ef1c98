/**
 * The embedded default's public surface: finding or installing the `temporal` CLI, reading
 * `temporal-dev.yml`, and running a Temporal dev server. The one-process `npm start` and the test
 * global setup use only what is exported here.
 */

export { findOrInstallTemporalCli, verifyTemporalCli, cachedCandidates } from "./temporal-cli.ts";
export type { FindTemporalCliOptions } from "./temporal-cli.ts";
export { TEMPORAL_CLI_VERSION } from "./temporal-cli-install.ts";
export { loadDevServerConfig, parseDevServerConfig, startDevArgs } from "./dev-server-config.ts";
export type {
  DevServerConfig,
  DevServerLaunch,
  DevServerLogLevel,
  ParseDevServerConfigOptions,
  SearchAttributeType,
} from "./dev-server-config.ts";
export { startDevServer } from "./dev-server.ts";
export type { DevServer, StartDevServerOptions } from "./dev-server.ts";
export { getFreePort, isPortFree, assertPortFree, startOnFreePort } from "./free-port.ts";
