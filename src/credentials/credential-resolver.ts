/**
 * Resolves a call's credentials inside the dispatching activity, the only place they are
 * opened. Each MCP server resolves on its own: the first scope that has credentials for that
 * server — the run's own, else the end user's for the toolset, else the toolset's — and that
 * scope's headers alone are sent, never a merge. A derived toolset's stored credentials come
 * before its base's in each stored scope. Stored values are cached for a moment, but never from
 * before the run started, so a run sees every write made before it (an end user's credentials
 * written just before the run can't be missed for the toolset's); every write bumps a revision,
 * so a renewal is seen by the next call.
 */
import type { Client } from "@temporalio/client";
import {
  credentialsWorkflowId,
  ownOf,
  type CredentialRef,
  type CredentialRevisions,
  type CredentialScope,
  type CredentialSet,
  type StoredCredentials,
} from "../shared/index.ts";
import { getCredentialsQuery } from "../workflows/messages.ts";
import type { SecretBox } from "./secret-box.ts";

export interface ResolvedCredentials {
  scope: CredentialScope | undefined;
  /** Headers for the server, empty when no scope has credentials for it. */
  headers: Record<string, string>;
  /** The stored credentials' revisions it was resolved against (absent for the run's own). */
  revisions?: CredentialRevisions;
}

export interface CredentialResolver {
  resolve(ref: CredentialRef, server: string): Promise<ResolvedCredentials>;
}

const CACHE_MS = 1_000;

export function createCredentialResolver(options: { client: Client; box: SecretBox }): CredentialResolver {
  const cache = new Map<string, { at: number; stored: StoredCredentials | undefined }>();
  /**
   * Reads in progress, shared: the first calls of a run that fans out ask once. A read is shared
   * only with runs that started before it began: one that began earlier may miss a write made
   * just before a later run started.
   */
  const reading = new Map<string, { startedAt: number; value: Promise<StoredCredentials | undefined> }>();

  function read(
    key: string,
    namespace: string,
    toolsetId: string,
    notBefore: number,
  ): Promise<StoredCredentials | undefined> {
    const pending = reading.get(key);
    if (pending && pending.startedAt >= notBefore) return pending.value;
    const startedAt = Date.now();
    const remember = (stored: StoredCredentials | undefined): void => {
      // A read that began earlier and answered later does not replace a newer one's.
      if ((cache.get(key)?.at ?? -Infinity) <= startedAt) cache.set(key, { at: startedAt, stored });
    };
    const value = (async () => {
      try {
        const stored = await options.client.workflow
          .getHandle(credentialsWorkflowId(namespace, toolsetId))
          .query(getCredentialsQuery);
        remember(stored);
        return stored;
      } catch (error) {
        if ((error as { name?: string }).name !== "WorkflowNotFoundError") throw error;
        remember(undefined);
        return undefined;
      } finally {
        // A read starts only where the one in progress began earlier, so its start names it.
        if (reading.get(key)?.startedAt === startedAt) reading.delete(key);
      }
    })();
    reading.set(key, { startedAt, value });
    return value;
  }

  async function stored(
    namespace: string,
    toolsetId: string,
    notBefore: number,
    minRevision: number,
  ): Promise<StoredCredentials | undefined> {
    const key = `${namespace}/${toolsetId}`;
    const hit = cache.get(key);
    const fresh =
      hit && Date.now() - hit.at < CACHE_MS && hit.at >= notBefore && (hit.stored?.revision ?? 0) >= minRevision;
    if (fresh) return hit.stored;
    const value = await read(key, namespace, toolsetId, notBefore);
    // A read that began before a renewal the run was told of may still be stale: read again.
    return (value?.revision ?? 0) >= minRevision ? value : read(key, namespace, toolsetId, Date.now());
  }

  const open = (sealed: string): CredentialSet => JSON.parse(options.box.open(sealed)) as CredentialSet;
  /** The server's headers in one sealed set, if that set has credentials for the server. */
  const headersIn = (sealed: string | undefined, server: string): Record<string, string> | undefined => {
    if (sealed === undefined) return undefined;
    const servers = open(sealed).mcpServers;
    return ownOf(servers, server)?.headers;
  };
  // Own keys only: an end user called "constructor" has no credentials of Object's.
  const endUserOf = (saved: StoredCredentials | undefined, endUser: string | undefined) =>
    endUser !== undefined && saved ? ownOf(saved.endUsers, endUser) : undefined;

  return {
    async resolve(ref, server) {
      const fromRun = headersIn(ref.runSealed, server);
      if (fromRun) return { scope: "run", headers: fromRun };
      const notBefore = ref.notBefore ?? 0;
      const [own, base] = await Promise.all([
        stored(ref.namespace, ref.toolsetId, notBefore, ref.minRevision ?? 0),
        ref.baseToolsetId === undefined
          ? undefined
          : stored(ref.namespace, ref.baseToolsetId, notBefore, ref.baseMinRevision ?? 0),
      ]);
      const revisions: CredentialRevisions = {
        own: own?.revision ?? 0,
        ...(ref.baseToolsetId === undefined ? {} : { base: base?.revision ?? 0 }),
      };
      const fromEndUser =
        headersIn(endUserOf(own, ref.endUser), server) ?? headersIn(endUserOf(base, ref.endUser), server);
      if (fromEndUser) return { scope: "endUser", headers: fromEndUser, revisions };
      const fromToolset = headersIn(own?.toolset, server) ?? headersIn(base?.toolset, server);
      if (fromToolset) return { scope: "toolset", headers: fromToolset, revisions };
      return { scope: undefined, headers: {}, revisions };
    },
  };
}
