/**
 * The harness SDK: serve host tools, fail a call on purpose, call the API, read the events Rewind
 * sends, read Temporal's standard connection settings, and give an agent framework (the AI SDK, the
 * OpenAI Agents SDK) the code-mode tools of a toolset's MCP server.
 */
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
  type DeclarationsOptions,
  type StartRunRequest,
} from "./api-client.ts";
export type {
  ApprovalRequestedData,
  CredentialsExpiredData,
  EventCall,
  EventData,
  EventSchema,
  EventType,
  HarnessEvent,
  InputRequestedData,
  RunCancelledData,
  RunCompletedData,
  RunFailedData,
  SchemaChangedData,
} from "../shared/index.ts";
export { RUN_FAILURE_TYPES, type RunFailure, type RunFailureType } from "../shared/index.ts";
export { replayCassette, type ReplayError, type ReplayOptions, type ReplayOutcome } from "./replay.ts";
export { temporalSettings, ConfigError, type TemporalSettings } from "../config.ts";
export type { TemporalTls } from "../temporal/index.ts";
export {
  connectCodeMode,
  type CodeModeAnswer,
  type CodeModeConnection,
  type CodeModeOptions,
  type CodeModeTool,
} from "./code-mode.ts";
export { rewindAiSdkTools, type RewindAiSdkTools } from "./ai-sdk-tools.ts";
export { rewindAgentsTools, type RewindAgentsTools } from "./openai-agents-tools.ts";
export { END_USER_HEADER } from "../contract/index.ts";
