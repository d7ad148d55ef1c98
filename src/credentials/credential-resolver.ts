/**
 * Resolves a call's credentials inside the dispatching activity, the only place they are
 * opened: the run's own, else the end user's for the toolset, else the toolset's — the first
 * scope that has any, never a merge. Stored values are cached for a moment; every write bumps
 * a revision, so a renewal is seen by the next call.
 */
import type { Client } from "@temporalio/client";
import { credentialsWorkflowId, type CredentialRef, type CredentialScope, type CredentialSet, type StoredCredentials } from "../shared/credentials.ts";
import { getCredentialsQuery } from "../workflows/toolset-credentials.ts";
import type { SecretBox } from "./secret-box.ts";

export interface ResolvedCredentials {
  scope: CredentialScope | undefined;
  /** Headers for the server, empty when no scope has credentials for it. */
  headers: Record<string, string>;
}

export interface CredentialResolver {
  resolve(ref: CredentialRef, server: string): Promise<ResolvedCredentials>;
}

const CACHE_MS = 1_000;

export function createCredentialResolver(options: { client: Client; box: SecretBox }): CredentialResolver {
  const cache = new Map<string, { at: number; stored: StoredCredentials | undefined }>();

  async function stored(namespace: string, toolsetId: string, minRevision = 0): Promise<StoredCredentials | undefined> {
    const key = `${namespace}/${toolsetId}`;
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < CACHE_MS && (hit.stored?.revision ?? 0) >= minRevision) return hit.stored;
    let value: StoredCredentials | undefined;
    try {
      value = await options.client.workflow.getHandle(credentialsWorkflowId(namespace, toolsetId)).query(getCredentialsQuery);
    } catch (error) {
      if ((error as { name?: string }).name !== "WorkflowNotFoundError") throw error;
    }
    cache.set(key, { at: Date.now(), stored: value });
    return value;
  }

  const open = (sealed: string): CredentialSet => JSON.parse(options.box.open(sealed)) as CredentialSet;

  return {
    async resolve(ref, server) {
      if (ref.runSealed) return { scope: "run", headers: open(ref.runSealed).mcpServers[server]?.headers ?? {} };
      const saved = await stored(ref.namespace, ref.toolsetId, ref.minRevision);
      // Own keys only: an end user called "constructor" has no credentials of Object's.
      const endUser = ref.endUser !== undefined && saved && Object.hasOwn(saved.endUsers, ref.endUser) ? saved.endUsers[ref.endUser] : undefined;
      if (endUser) return { scope: "endUser", headers: open(endUser).mcpServers[server]?.headers ?? {} };
      if (saved?.toolset) return { scope: "toolset", headers: open(saved.toolset).mcpServers[server]?.headers ?? {} };
      return { scope: undefined, headers: {} };
    },
  };
}
