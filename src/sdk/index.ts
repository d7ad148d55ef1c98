/** The harness SDK: serve host tools, fail a call on purpose, read Temporal's standard connection settings. */
export {
  createHostToolWorker,
  type HostTool,
  type HostToolContext,
  type HostToolWorker,
  type HostToolWorkerOptions,
} from "./host-tool-worker.ts";
export { ToolError } from "./tool-error.ts";
export {
  createApiClient,
  RewindApiError,
  type ApiClient,
  type ApiClientOptions,
  type ApiErrorCode,
  type ClientErrorCode,
  type StartRunRequest,
} from "./api-client.ts";
export { replayCassette, type ReplayError, type ReplayOptions, type ReplayOutcome } from "./replay.ts";
export { temporalSettings, ConfigError, type TemporalSettings } from "../config.ts";
export type { TemporalTls } from "../temporal/index.ts";
