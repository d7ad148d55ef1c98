/**
 * Resolves a call's credentials inside the dispatching activity, the only place they are
 * opened: the run's own, else the end user's for the toolset, else the toolset's — the first
 * scope that has any, never a merge. Stored values are cached for a moment, but never from
 * before the run started, so a run sees every write made before it (an end user's credentials
 * written just before the run can't be missed for the toolset's); every write bumps a revision,
 * so a renewal is seen by the next call.
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
  /** Reads in progress, shared: the first calls of a run that fans out ask once. */
  const reading = new Map<string, Promise<StoredCredentials | undefined>>();

  function read(key: string, namespace: string, toolsetId: string): Promise<StoredCredentials | undefined> {
    let pending = reading.get(key);
    if (!pending) {
      const startedAt = Date.now();
      pending = (async () => {
        try {
          const value = await options.client.workflow.getHandle(credentialsWorkflowId(namespace, toolsetId)).query(getCredentialsQuery);
          cache.set(key, { at: startedAt, stored: value });
          return value;
        } catch (error) {
          if ((error as { name?: string }).name !== "WorkflowNotFoundError") throw error;
          cache.set(key, { at: startedAt, stored: undefined });
          return undefined;
        } finally {
          reading.delete(key);
        }
      })();
      reading.set(key, pending);
    }
    return pending;
  }

  async function stored(ref: CredentialRef): Promise<StoredCredentials | undefined> {
    const key = `${ref.namespace}/${ref.toolsetId}`;
    const hit = cache.get(key);
    const fresh = hit && Date.now() - hit.at < CACHE_MS && hit.at >= (ref.notBefore ?? 0) && (hit.stored?.revision ?? 0) >= (ref.minRevision ?? 0);
    if (fresh) return hit.stored;
    const value = await read(key, ref.namespace, ref.toolsetId);
    // A read that began before a renewal the run was told of may still be stale: read again.
    return (value?.revision ?? 0) >= (ref.minRevision ?? 0) ? value : read(key, ref.namespace, ref.toolsetId);
  }

  const open = (sealed: string): CredentialSet => JSON.parse(options.box.open(sealed)) as CredentialSet;

  return {
    async resolve(ref, server) {
      if (ref.runSealed) return { scope: "run", headers: open(ref.runSealed).mcpServers[server]?.headers ?? {} };
      const saved = await stored(ref);
      // Own keys only: an end user called "constructor" has no credentials of Object's.
      const endUser = ref.endUser !== undefined && saved && Object.hasOwn(saved.endUsers, ref.endUser) ? saved.endUsers[ref.endUser] : undefined;
      if (endUser) return { scope: "endUser", headers: open(endUser).mcpServers[server]?.headers ?? {} };
      if (saved?.toolset) return { scope: "toolset", headers: open(saved.toolset).mcpServers[server]?.headers ?? {} };
      return { scope: undefined, headers: {} };
    },
  };
}
