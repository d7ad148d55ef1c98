/**
 * Credentials as the run engine knows them: never in clear. A scope names whose credentials a
 * call used (the run's own, an end user's for the toolset, or the toolset's); a run carries
 * only its own credentials, sealed. The plaintext shape is per MCP server: headers to inject.
 */
import type { RunInput } from "./run.ts";

/** Plaintext, only ever inside the dispatching activity or the API request that writes it. */
export interface CredentialSet {
  mcpServers: Record<string, { headers: Record<string, string> }>;
}

export type CredentialScope = "run" | "endUser" | "toolset";

/** What a call's activity needs to resolve its credentials. */
export interface CredentialRef {
  namespace: string;
  toolsetId: string;
  /**
   * The toolset this one derives from, if it does: its stored credentials (end user's, then the
   * toolset's) stand behind the derived toolset's own of the same scope.
   */
  baseToolsetId?: string;
  endUser?: string;
  /** The run's own credentials, sealed before they reached Temporal (renewed ones once renewed). */
  runSealed?: string;
  /** Stored credentials older than this revision are stale: the run was told of a newer write. */
  minRevision?: number;
  /** The same, for the base toolset's stored credentials. */
  baseMinRevision?: number;
  /**
   * Stored credentials read before this time (epoch ms: the run's start) are read again: what
   * was written before the run started must be what its calls use.
   */
  notBefore?: number;
}

/** A new run's credential ref: its toolset's (and base's) stored credentials, its end user's, its own. */
export function runCredentialRef(
  run: Pick<RunInput, "namespace" | "toolsetId" | "toolset" | "endUser" | "credentials">,
  notBefore: number,
): CredentialRef {
  return {
    namespace: run.namespace,
    toolsetId: run.toolsetId,
    notBefore,
    ...(run.toolset.base ? { baseToolsetId: run.toolset.base } : {}),
    ...(run.endUser ? { endUser: run.endUser } : {}),
    ...(run.credentials ? { runSealed: run.credentials } : {}),
  };
}

export const CREDENTIALS_WORKFLOW_TYPE = "toolsetCredentials";

export function credentialsWorkflowId(namespace: string, toolsetId: string): string {
  return `credentials/${namespace}/${toolsetId}`;
}

/** State of a toolset's credentials workflow: sealed values only. */
export interface StoredCredentials {
  toolset?: string;
  endUsers: Record<string, string>;
  /** Bumped by every write, whatever its scope. */
  revision: number;
  /**
   * The revision of each scope's last write: the toolset's and each end user's. A scope not
   * named was last written at `floor` or before (0: never): the revision when the workflow began
   * recording them. Absent in state kept before then.
   */
  writtenAt?: { floor: number; toolset?: number; endUsers: Record<string, number> };
}

/**
 * Revisions of the stored credentials a call's attempt was resolved against: its toolset's and,
 * for a derived toolset, its base's. A call refused with them waits for a newer write.
 */
export interface CredentialRevisions {
  own: number;
  base?: number;
}

/**
 * A run parked on a scope's stored credentials, as it tells the toolset's credentials workflow
 * (signalled with start, so it exists before any write): that workflow signals the run on the
 * first write to the scope newer than `seen`, or at once if one was made since. The wake-up never
 * depends on the run being listed as parked, which visibility shows only after a delay.
 */
export interface CredentialsWait {
  /** The parked run's workflow id. */
  runId: string;
  /** The scope the refused call used; null when no scope had credentials for its server. */
  scope: "endUser" | "toolset" | null;
  endUser?: string;
  /** This toolset's revision the refused call was resolved against. */
  seen: number;
  /** This toolset's id when it is the run's base, not its own: echoed in the renewal (`CredentialsRenewed.toolsetId`). */
  toolsetId?: string;
}

/** Signal the API sends to parked runs when a scope's credentials were written. */
export interface CredentialsRenewed {
  scope: CredentialScope;
  endUser?: string;
  /** Revision of the toolset's stored credentials after the write. */
  revision: number;
  /** The toolset written, when it is the run's base toolset rather than its own. */
  toolsetId?: string;
}

/** Signal the API sends a run whose own credentials were replaced (`PUT /v1/runs/{id}/credentials`). */
export interface RunCredentialsRenewed {
  /** The run's new credentials, sealed before they reached Temporal. */
  sealed: string;
}
