/**
 * The OpenAPI document's `webhooks`: one per event type Rewind POSTs to a namespace's events
 * endpoint, with its body's schema (event-schemas.ts) and the Standard Webhooks headers that sign
 * it. Listing EVENT_TYPES here, not by hand, keeps a new event type from going undocumented.
 */
import type { z } from "zod";
import { EVENT_TYPES, type EventType } from "../shared/index.ts";
import { EVENT_DATA, EVENT_SCHEMAS } from "./event-schemas.ts";

type JsonObject = Record<string, unknown>;

const pascal = (type: EventType): string =>
  type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("");

/** `run.cancelled` → `RunCancelledEvent`: the component holding that event's body. */
export function eventComponentName(type: EventType): string {
  return `${pascal(type)}Event`;
}

/** Every event's body schema, by component name. */
export const EVENT_COMPONENTS: Record<string, z.ZodType> = Object.fromEntries(
  EVENT_TYPES.map((type) => [eventComponentName(type), EVENT_SCHEMAS[type]]),
);

const SIGNATURE_HEADERS: JsonObject[] = [
  {
    name: "webhook-id",
    in: "header",
    required: true,
    schema: { type: "string" },
    description: "The event's id (`id` in the body): the same on every retry of one event; deduplicate on it.",
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    schema: { type: "string" },
    description:
      "When this attempt was sent, in seconds since the epoch; refuse attempts too far from now (Standard Webhooks suggests 5 minutes).",
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    schema: { type: "string" },
    description:
      "`v1,` then the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64-decoded part of the namespace's `whsec_` secret (Standard Webhooks; its libraries verify it).",
  },
];

function webhook(type: EventType): JsonObject {
  const { summary, description } = EVENT_DATA[type];
  return {
    post: {
      operationId: `on${pascal(type)}`,
      summary,
      description: `${description} Sent to the events endpoint (PUT /v1/events/endpoint) with the namespace's secret.`,
      tags: ["events"],
      parameters: SIGNATURE_HEADERS,
      requestBody: {
        required: true,
        content: { "application/json": { schema: { $ref: `#/components/schemas/${eventComponentName(type)}` } } },
      },
      responses: {
        "2XX": {
          description:
            "Received. Any other answer, or none within 15 seconds, is retried with backoff for up to three days, under the same webhook-id.",
        },
      },
      security: [],
    },
  };
}

export function buildWebhooks(): Record<string, JsonObject> {
  return Object.fromEntries(EVENT_TYPES.map((type) => [type, webhook(type)]));
}
