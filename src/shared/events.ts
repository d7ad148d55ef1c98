/**
 * Events Rewind sends to a harness, as Standard Webhooks. Each has a deterministic id (the
 * `webhook-id`), derived from the run and what happened, so a retried delivery and a replayed
 * workflow both send the same id and a harness can deduplicate on it.
 */
import type { CredentialScope } from "./credentials.ts";

export const EVENT_TYPES = [
  "call.approval_requested",
  "call.input_requested",
  "credentials.expired",
  "tool.schema_changed",
  "run.completed",
  "run.failed",
  "run.cancelled",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The call an event is about. */
interface EventCall {
  seq: number;
  /** `group.tool`, as in the journal. */
  tool: string;
}

/** A JSON Schema as a tool lists it, or null when there is none (the tool is gone). */
export type EventSchema = Record<string, unknown> | boolean | null;

/** What each event type says in its `data`; src/api/event-schemas.ts documents the same shapes. */
export interface EventData {
  "call.approval_requested": EventCall & { args?: unknown };
  "call.input_requested": EventCall & { message: string; requestedSchema: Record<string, unknown> };
  "credentials.expired": EventCall & {
    reason: "credentialsExpired" | "insufficientScope";
    scope: CredentialScope | null;
    scopeAsked?: string;
    /** The run's end user, as at the event's top level (kept for receivers written before it was there). */
    endUser?: string;
  };
  "tool.schema_changed": EventCall & { pinned: EventSchema; current: EventSchema };
  "run.completed": { result?: unknown };
  "run.failed": { error: { type: string; message: string } };
  "run.cancelled": { unfinished: (EventCall & { status: "pending" | "running" | "parked" })[] };
}

export interface HarnessEvent<T extends EventType = EventType> {
  id: string;
  type: T;
  runId: string;
  /** The toolset the run pinned. */
  toolset: string;
  /** The run's end user, or null. */
  endUser: string | null;
  /** ISO time the event happened (workflow time). */
  at: string;
  data: EventData[T];
}

export interface DeliverEventInput {
  namespace: string;
  event: HarnessEvent;
}

export const DELIVER_EVENT_WORKFLOW_TYPE = "deliverEventWorkflow";

export function eventId(runId: string, type: EventType, discriminator: string | number = "run"): string {
  return `evt_${runId}_${type.replace(".", "_")}_${discriminator}`;
}

/** Where a namespace's events go; the secret is sealed (see credentials/secret-box). */
export interface EventsEndpoint {
  url: string;
  sealedSecret: string;
}

export const NAMESPACE_SETTINGS_WORKFLOW_TYPE = "namespaceSettings";
export function namespaceSettingsWorkflowId(namespace: string): string {
  return `settings/${namespace}`;
}
