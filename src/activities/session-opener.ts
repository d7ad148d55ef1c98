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
import { ownOf, type CredentialRef, type IssuedCall, type PinnedToolset } from "../shared/index.ts";
import { runSessionsPrefix, sessionKeys } from "./call-mcp-tool.ts";

export interface SessionsToOpen {
  runId: string;
  credentials: CredentialRef;
  toolset: PinnedToolset;
  calls: readonly IssuedCall[];
}

export type OpenSessions = (sessions: SessionsToOpen) => void;

export interface SessionOpener {
  open: OpenSessions;
  /**
   * The run will not step here (its start failed after its first step): a session still waiting
   * for its credentials is not opened. Those already in the pool are the pool's to retire.
   */
  forget(namespace: string, runId: string): void;
}

export function createSessionOpener(deps: { mcpPool: McpPool; credentials: CredentialResolver }): SessionOpener {
  /** Credentials reads in progress, by run (`runSessionsPrefix`), and the runs forgotten meanwhile. */
  const reading = new Map<string, number>();
  const forgotten = new Set<string>();
  const settled = (run: string): void => {
    const left = (reading.get(run) ?? 1) - 1;
    if (left > 0) return void reading.set(run, left);
    reading.delete(run);
    forgotten.delete(run);
  };
  const open: OpenSessions = ({ runId, credentials, toolset, calls }) => {
    const run = runSessionsPrefix(credentials.namespace, runId);
    const groups = new Set(
      calls.filter((call) => !call.refused).map((call) => call.tool.slice(0, call.tool.indexOf("."))),
    );
    for (const group of groups) {
      const server = ownOf(toolset.mcpServers, group);
      if (!server) continue;
      reading.set(run, (reading.get(run) ?? 0) + 1);
      deps.credentials
        .resolve(credentials, group)
        .then(({ headers }) => {
          if (forgotten.has(run)) return;
          const { poolKey, sharedKey } = sessionKeys(credentials.namespace, runId, server.url, headers);
          deps.mcpPool.open(server.url, headers, poolKey, sharedKey);
        })
        .catch(() => undefined)
        .finally(() => settled(run));
    }
  };
  return {
    open,
    forget(namespace, runId) {
      const run = runSessionsPrefix(namespace, runId);
      if (reading.has(run)) forgotten.add(run);
    },
  };
}
