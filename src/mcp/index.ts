/** The MCP layer: listing a server's tools, pooled tool calls, and what a result means to a script. */
export { listAllTools, openMcpConnection } from "./mcp-client.ts";
export type { ListAllToolsOptions, McpConnection, OpenMcpConnectionOptions } from "./mcp-client.ts";
export { McpCallError, McpConnectError } from "./mcp-errors.ts";
export type { McpCallReason, McpConnectReason } from "./mcp-errors.ts";
export { createMcpPool } from "./mcp-pool.ts";
export type {
  McpCallHooks,
  McpCallOutcome,
  McpCallRequest,
  McpElicitation,
  McpElicitationAnswer,
  McpExchange,
  McpListing,
  McpPool,
  McpPoolOptions,
  McpProgress,
  McpTaskHandle,
  McpToolDescriptor,
} from "./mcp-types.ts";
export { resultValue } from "./result-value.ts";
export { REDACTED, createScrubber, scrubberFor, secretPartsOf, type Scrubber } from "./secret-scrubber.ts";
