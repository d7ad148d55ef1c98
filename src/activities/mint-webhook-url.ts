/**
 * The `mintWebhookUrl` local activity: the URL `webhook(name)` gives a script. It needs the
 * secret key, which workflow code never holds; its result is recorded in history like any
 * other call's, so replay gets the same URL.
 */
import type { WebhookTokens } from "../events/index.ts";

export interface MintWebhookDeps {
  webhookTokens: WebhookTokens;
  publicUrl: string;
}

export function createMintWebhookUrl(deps: MintWebhookDeps) {
  return async function mintWebhookUrl(input: { runId: string; name: string }): Promise<{ url: string }> {
    return { url: deps.webhookTokens.url(deps.publicUrl, input.runId, input.name) };
  };
}
