/**
 * Opens the MCP sessions a run's first step needs while the workflow task that issued its calls
 * completes, so each call's activity finds its session open or opening instead of resolving the
 * credentials and running `initialize` itself (Temporal hands the activity back to this worker
 * when the task completes: eager activity dispatch). Only the first step asks; a run's later
 * calls find their sessions open. Best effort: whatever fails here, the call does again and
 * reports.
 */
import type { CredentialResolver } from "../credentials/index.ts";
import type { McpPool } from "../mcp/index.ts";
import type { CredentialRef, IssuedCall, PinnedToolset } from "../shared/index.ts";
import { sessionKeys } from "./call-mcp-tool.ts";

export interface SessionsToOpen {
  runId: string;
  credentials: CredentialRef;
  toolset: PinnedToolset;
  calls: readonly IssuedCall[];
}

export type OpenSessions = (sessions: SessionsToOpen) => void;

export function createSessionOpener(deps: { mcpPool: McpPool; credentials: CredentialResolver }): OpenSessions {
  return ({ runId, credentials, toolset, calls }) => {
    const groups = new Set(
      calls.filter((call) => !call.refused).map((call) => call.tool.slice(0, call.tool.indexOf("."))),
    );
    for (const group of groups) {
      const server = Object.hasOwn(toolset.mcpServers, group) ? toolset.mcpServers[group] : undefined;
      if (!server) continue;
      deps.credentials.resolve(credentials, group).then(
        ({ headers }) =>
          deps.mcpPool.open(
            server.url,
            headers,
            sessionKeys(credentials.namespace, runId, server.url, headers).poolKey,
          ),
        () => undefined,
      );
    }
  };
}
