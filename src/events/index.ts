/** Harness events: where a namespace's events go, signing what is delivered, and webhook tokens. */
export { createEndpointResolver, type EndpointResolver } from "./endpoint-resolver.ts";
export { generateWebhookSecret, signedHeaders } from "./sign-event.ts";
export { createWebhookTokens, type WebhookTokens } from "./webhook-token.ts";
