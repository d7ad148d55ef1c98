/**
 * The one file that uses the `standardwebhooks` package: the headers of a signed delivery.
 * Secrets are `whsec_<base64>`, as Standard Webhooks (and Svix) define them.
 */
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";

export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

export function isWebhookSecret(secret: string): boolean {
  return /^whsec_[A-Za-z0-9+/]{16,}={0,2}$/.test(secret);
}

export function signedHeaders(secret: string, id: string, body: string, at: Date): Record<string, string> {
  const timestamp = new Date(Math.floor(at.getTime() / 1000) * 1000);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp.getTime() / 1000),
    "webhook-signature": new Webhook(secret).sign(id, timestamp, body),
  };
}
