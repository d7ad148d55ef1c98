/**
 * The token of a run's webhook URL: an HMAC of the run id and the webhook's name under a key
 * derived from REWIND_SECRET_KEY. Run ids are unique across namespaces, so a token for one run
 * opens nothing else; the API checks it before touching the run at all.
 */
import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";

export interface WebhookTokens {
  token(runId: string, name: string): string;
  verify(runId: string, name: string, token: string): boolean;
  url(publicUrl: string, runId: string, name: string): string;
}

export function createWebhookTokens(secretKey: Buffer): WebhookTokens {
  const key = Buffer.from(hkdfSync("sha256", secretKey, Buffer.alloc(0), "rewind webhook tokens v1", 32));
  const token = (runId: string, name: string) =>
    createHmac("sha256", key).update(`${runId}\n${name}`).digest("base64url");
  return {
    token,
    verify(runId, name, presented) {
      const expected = Buffer.from(token(runId, name));
      const given = Buffer.from(presented);
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
    url(publicUrl, runId, name) {
      return `${publicUrl.replace(/\/+$/, "")}/v1/hooks/${encodeURIComponent(runId)}/${encodeURIComponent(name)}?token=${token(runId, name)}`;
    },
  };
}
