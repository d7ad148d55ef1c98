/**
 * Finds where a namespace's events go: its settings workflow's endpoint, else (for the default
 * namespace) the one configured by REWIND_EVENTS_URL. Answers are cached briefly, since every
 * event asks and endpoints change rarely; the secret is opened only here, at delivery.
 */
import type { Client } from "@temporalio/client";
import type { SecretBox } from "../credentials/index.ts";
import { namespaceSettingsWorkflowId } from "../shared/index.ts";
import { getNamespaceSettingsQuery } from "../workflows/messages.ts";

export interface ResolvedEndpoint {
  url: string;
  secret: string;
  /**
   * Who chose the URL: a tenant through the API (dialled under the outbound target policy), or
   * the operator (REWIND_EVENTS_URL, the default namespace's fallback).
   */
  chosenBy: "tenant" | "operator";
}

export interface EndpointResolver {
  resolve(namespace: string): Promise<ResolvedEndpoint | undefined>;
}

const CACHE_MS = 2_000;

export function createEndpointResolver(options: {
  client: Client;
  box: SecretBox;
  fallback?: { url: string; secret: string } | undefined;
}): EndpointResolver {
  const cache = new Map<string, { at: number; endpoint: ResolvedEndpoint | undefined }>();
  return {
    async resolve(namespace) {
      const hit = cache.get(namespace);
      if (hit && Date.now() - hit.at < CACHE_MS) return hit.endpoint;
      let endpoint: ResolvedEndpoint | undefined;
      try {
        const settings = await options.client.workflow
          .getHandle(namespaceSettingsWorkflowId(namespace))
          .query(getNamespaceSettingsQuery);
        if (settings.eventsEndpoint)
          endpoint = {
            url: settings.eventsEndpoint.url,
            secret: options.box.open(settings.eventsEndpoint.sealedSecret),
            chosenBy: "tenant",
          };
      } catch (error) {
        if ((error as { name?: string }).name !== "WorkflowNotFoundError") throw error;
      }
      endpoint ??=
        namespace === "default" && options.fallback ? { ...options.fallback, chosenBy: "operator" } : undefined;
      cache.set(namespace, { at: Date.now(), endpoint });
      return endpoint;
    },
  };
}
