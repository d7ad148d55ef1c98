/**
 * Events Rewind sends to a harness, as Standard Webhooks. Each has a deterministic id (the
 * `webhook-id`), derived from the run and what happened, so a retried delivery and a replayed
 * workflow both send the same id and a harness can deduplicate on it.
 */
export const EVENT_TYPES = ["call.approval_requested", "call.input_requested", "credentials.expired", "tool.schema_changed", "run.completed", "run.failed", "run.cancelled"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface HarnessEvent {
  id: string;
  type: EventType;
  runId: string;
  /** ISO time the event happened (workflow time). */
  at: string;
  data: Record<string, unknown>;
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
