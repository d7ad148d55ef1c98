/**
 * Events Rewind sends to a harness, as Standard Webhooks. Each has a deterministic id (the
 * `webhook-id`), derived from the run and what happened, so a retried delivery and a replayed
 * workflow both send the same id and a harness can deduplicate on it.
 */
import type { CredentialScope } from "./credentials.ts";
import type { RollbackSummary } from "./rollback.ts";

export const EVENT_TYPES = [
  "call.approval_requested",
  "call.input_requested",
  "call.outcome_unknown",
  "credentials.expired",
  "tool.schema_changed",
  "run.completed",
  "run.failed",
  "run.cancelled",
  "run.rolled_back",
  "run.approval_requested",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The call an event is about. */
export interface EventCall {
  seq: number;
  /** `group.tool`, as in the journal. */
  tool: string;
}

/** A JSON Schema as a tool lists it, or null when there is none (the tool is gone). */
export type EventSchema = Record<string, unknown> | boolean | null;

/** `call.approval_requested`: a call waits for the harness to approve it. */
export type ApprovalRequestedData = EventCall & { args?: unknown };

/** `call.input_requested`: an MCP server asked for input (elicitation) while the call ran. */
export type InputRequestedData = EventCall & { message: string; requestedSchema: Record<string, unknown> };

/**
 * `call.outcome_unknown`: an `at_most_once` call ended without a known outcome and its policy
 * says `onUnknown: "park"`; it waits for the harness to resolve, retry or fail it.
 */
export type OutcomeUnknownData = EventCall & { args?: unknown; message: string; attempts: number };

/** `credentials.expired`: the server refused the call's credentials (401) or their scope (403). */
export type CredentialsExpiredData = EventCall & {
  reason: "credentialsExpired" | "insufficientScope";
  scope: CredentialScope | null;
  scopeAsked?: string;
  /** The run's end user, as at the event's top level (kept for receivers written before it was there). */
  endUser?: string;
};

/** `tool.schema_changed`: the tool's schema is not the one pinned; the call waits for a decision. */
export type SchemaChangedData = EventCall & { pinned: EventSchema; current: EventSchema };

/** `run.completed`: the script's result. */
export interface RunCompletedData {
  result?: unknown;
}

/**
 * `run.failed`: why. `type` is one of RUN_FAILURE_TYPES (shared/run.ts); an event of a run that
 * failed on an error of its own before RunBroken existed carries that error's type.
 */
export interface RunFailedData {
  error: { type: string; message: string };
}

/** `run.cancelled`: the calls that had not finished. */
export interface RunCancelledData {
  unfinished: (EventCall & { status: "pending" | "running" | "parked" })[];
}

/**
 * `run.approval_requested`: the run waits, before its first step, for the harness to approve its
 * script: the script as it will run (types stripped), its hash, and the toolset whose
 * declarations it was checked against.
 */
export interface RunApprovalRequestedData {
  script: string;
  scriptHash: string;
  toolset: string;
}

/** `run.rolled_back`: what set the rollback off, what was reverted, what could not be, and what never finished. */
export type RunRolledBackData = Omit<RollbackSummary, "state">;

/** What each event type says in its `data`; src/api/event-schemas.ts documents the same shapes. */
export interface EventData {
  "call.approval_requested": ApprovalRequestedData;
  "call.input_requested": InputRequestedData;
  "call.outcome_unknown": OutcomeUnknownData;
  "credentials.expired": CredentialsExpiredData;
  "tool.schema_changed": SchemaChangedData;
  "run.completed": RunCompletedData;
  "run.failed": RunFailedData;
  "run.cancelled": RunCancelledData;
  "run.rolled_back": RunRolledBackData;
  "run.approval_requested": RunApprovalRequestedData;
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
