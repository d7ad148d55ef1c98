/**
 * The pinned toolset document: what a run may call, frozen at registration. Its canonical JSON
 * digest is the toolset id. Shared because the workflow carries it for the run's whole life and
 * the sandbox, declarations and dispatchers all read it. It never holds credentials.
 */

/** A JSON Schema as pinned from a server or a host-tool declaration. Kept opaque here. */
export type JsonSchema = { [key: string]: unknown } | boolean;

export interface PinnedTool {
  /** Exactly as the server (or host-tool group) names it. */
  name: string;
  description?: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  /** MCP tool annotations (readOnlyHint, destructiveHint, …), kept for the harness to read. */
  annotations?: Record<string, unknown>;
}

export interface PinnedMcpServer {
  url: string;
  tools: PinnedTool[];
}

export interface PinnedHostToolGroup {
  /** The Temporal task queue the harness's host-tool worker polls. */
  taskQueue: string;
  tools: PinnedTool[];
}

export type InterruptionPolicy = "retry" | "at_most_once";

/**
 * What an `at_most_once` call whose outcome is unknown does: `fail` gives the script
 * ToolError(outcomeUnknown) at once (the default); `park` waits for the harness to resolve it
 * with a result, send it again with the same key, or fail it.
 */
export type UnknownOutcomePolicy = "fail" | "park";

export interface ToolPolicy {
  onInterruption?: InterruptionPolicy;
  /** Only with `at_most_once` (or `http.fetch` left to its per-method rule). */
  onUnknown?: UnknownOutcomePolicy;
  approval?: boolean;
  /** Per-attempt start-to-close timeout, in milliseconds once pinned. */
  timeoutMs?: number;
  /** Host tools only: longest silence between heartbeats, in milliseconds once pinned. */
  heartbeatTimeoutMs?: number;
  /** Calls of this tool in flight per run, within the run-wide limit. */
  concurrency?: number;
  /** How a rollback undoes a completed call of this tool: another tool's call, its arguments a template. */
  revert?: RevertPolicy;
}

/**
 * The call that undoes another: `tool` (`group.tool`, of the same toolset) and its arguments, a
 * template filled in from the original call's arguments and result (see revert-template.ts).
 */
export interface RevertPolicy {
  tool: string;
  args: unknown;
}

export interface HttpToolSettings {
  allowedHosts: string[];
}

export interface PinnedToolset {
  /** Version of this document's shape; part of the digest. */
  format: 1;
  /** Id of the toolset this one derives from, if any. */
  base?: string;
  /** MCP servers by group name. */
  mcpServers: Record<string, PinnedMcpServer>;
  /** Host-tool groups by group name. */
  hostTools: Record<string, PinnedHostToolGroup>;
  http?: HttpToolSettings;
  /** Workflow scripts a run may start, by the name scripts use (`workflows.<name>`). */
  workflows: Record<string, string>;
  /** Policies by qualified tool name (`group.tool`). */
  policies: Record<string, ToolPolicy>;
  /** `required`: every run of this toolset waits, before its first step, for the harness to approve its script. */
  scriptApproval?: "required";
}

export const EMPTY_TOOLSET: PinnedToolset = {
  format: 1,
  mcpServers: {},
  hostTools: {},
  workflows: {},
  policies: {},
};

/** Every tool of the toolset with its group, in a stable order (groups, then tools, by name). */
export function listToolGroups(toolset: PinnedToolset): { group: string; kind: "mcp" | "host"; tools: PinnedTool[] }[] {
  const groups: { group: string; kind: "mcp" | "host"; tools: PinnedTool[] }[] = [];
  for (const [group, server] of Object.entries(toolset.mcpServers))
    groups.push({ group, kind: "mcp", tools: server.tools });
  for (const [group, host] of Object.entries(toolset.hostTools))
    groups.push({ group, kind: "host", tools: host.tools });
  return groups.sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
}
