/**
 * The events Rewind sends to a harness, as zod schemas: one envelope per event type with that
 * type's `data`, so the OpenAPI document's `webhooks` describe exactly what a harness receives.
 * The type checks at the end fail `tsc` when what the workflow emits (src/shared/events.ts)
 * and what is documented here drift apart; tests validate delivered events against the document.
 */
import { z } from "zod";
import type { EventType, HarnessEvent } from "../shared/index.ts";
import { RUN_FAILURE_TYPES } from "../shared/index.ts";
import { runRolledBackData } from "../contract/index.ts";

const seq = z.number().int().min(1).describe("The call's seq in the run's journal");
const tool = z.string().describe("The call's tool, `group.tool`");
const args = z
  .unknown()
  .optional()
  .describe("The call's arguments, as the script passed them (absent when it passed none)");
const jsonSchema = z.union([z.record(z.string(), z.unknown()), z.boolean()]);

/** Each event type's `data`, with what the event means (the webhook's description). */
export const EVENT_DATA = {
  "call.approval_requested": {
    summary: "A call waits for approval (its policy says `approval: true`)",
    description: "The call has not been sent. Answer with POST /v1/runs/{id}/calls/{seq}/approve or …/reject.",
    data: z.object({
      seq,
      tool,
      args,
    }),
  },
  "call.input_requested": {
    summary: "A call in flight waits for input its MCP server asked for (elicitation)",
    description:
      "Answer with POST /v1/runs/{id}/calls/{seq}/elicitation (accept with content that fits `requestedSchema`, decline or cancel).",
    data: z.object({
      seq,
      tool,
      message: z.string().describe("The server's question"),
      requestedSchema: z
        .record(z.string(), z.unknown())
        .describe("The JSON Schema an accepted answer's content must fit"),
    }),
  },
  "call.outcome_unknown": {
    summary: 'An `at_most_once` call ended without a known outcome, and its policy says `onUnknown: "park"`',
    description:
      "The call may or may not have taken effect; it waits for the harness. Resolve it with its result (POST /v1/runs/{id}/calls/{seq}/resolve), send it again with the same idempotency key (…/retry), or fail it (…/fail: the script gets ToolError(outcomeUnknown)).",
    data: z.object({
      seq,
      tool,
      args,
      message: z.string().describe("What happened to the attempt"),
      attempts: z.number().int().min(1).describe("Attempts sent so far (a retry decided by the harness is one more)"),
    }),
  },
  "credentials.expired": {
    summary: "A call's MCP server refused its credentials: 401 (expired) or 403 insufficient_scope",
    description:
      "The call is parked. Renew the credentials of `scope` (writing them wakes the call), or POST …/calls/{seq}/resume; the call is sent again with the same idempotency key.",
    data: z.object({
      seq,
      tool,
      reason: z.enum(["credentialsExpired", "insufficientScope"]),
      scope: z
        .enum(["run", "endUser", "toolset"])
        .nullable()
        .describe("Whose credentials the call used; null when it had none"),
      scopeAsked: z.string().optional().describe("The OAuth scope the server asked for (insufficientScope)"),
      endUser: z.string().optional().describe("The run's end user, as at the event's top level"),
    }),
  },
  "tool.schema_changed": {
    summary: "A call no longer fits its tool's current schema, or the tool is gone",
    description:
      "The call is parked. Approve (send it against the new schema), reject (the script gets ToolError(schemaChanged)), cancel the run, or fork it with a corrected script.",
    data: z.object({
      seq,
      tool,
      pinned: jsonSchema.nullable().describe("The input schema the toolset pinned"),
      current: jsonSchema.nullable().describe("The server's input schema now; null when the tool is gone"),
    }),
  },
  "run.completed": {
    summary: "A run completed",
    description: "The script returned.",
    data: z.object({
      result: z.unknown().optional().describe("What the script returned (absent when it returned nothing)"),
    }),
  },
  "run.failed": {
    summary: "A run failed",
    description:
      "The script threw, hit a limit, or waited for something nothing would settle; or Rewind could not go on with the run.",
    data: z.object({
      error: z.object({
        type: z.string().describe(
          `${Object.values(RUN_FAILURE_TYPES)
            .map((type) => `\`${type}\``)
            .join(", ")}; a run that failed on an error of its own before RunBroken existed gave that error's type`,
        ),
        message: z.string(),
      }),
    }),
  },
  "run.cancelled": {
    summary: "A run was cancelled",
    description:
      "Calls it left unfinished are listed: a parked call was never sent; a running one may or may not have taken effect.",
    data: z.object({
      unfinished: z
        .array(z.object({ seq, tool, status: z.enum(["pending", "running", "parked"]) }))
        .describe("Calls issued and not finished when the run was cancelled, by seq"),
    }),
  },
  "run.approval_requested": {
    summary: "A run waits, before its first step, for the harness to approve its script",
    description:
      'Asked by the run option `approveScript: true` or the toolset\'s `scriptApproval: "required"`. Nothing of the script has run. Approve with POST /v1/runs/{id}/approve, or reject with POST /v1/runs/{id}/reject: the run fails with ScriptRejected and its script never runs.',
    data: z.object({
      script: z.string().describe("The script as it will run (JavaScript: types stripped, positions kept)"),
      scriptHash: z.string().describe("SHA-256 of the script as written"),
      toolset: z
        .string()
        .describe("The toolset whose declarations the script was checked against (GET /v1/toolsets/{id}/declarations)"),
    }),
  },
  "run.rolled_back": {
    summary: "A run was rolled back",
    description:
      'Asked with POST /v1/runs/{id}/rollback, or its script failed under `onFailure: "rollback"`. Its completed calls with a revert policy were reverted newest first, each by a journaled call of its own; those that could not be are listed with the reason.',
    data: runRolledBackData,
  },
} as const satisfies Record<EventType, { summary: string; description: string; data: z.ZodType }>;

function envelope<T extends EventType, D extends z.ZodType>(type: T, data: D) {
  return z.object({
    id: z.string().describe("The event's id, also its `webhook-id`: the same on every retry, so deduplicate on it"),
    type: z.literal(type),
    runId: z.string(),
    toolset: z.string().describe("The toolset the run pinned"),
    endUser: z.string().nullable().describe("The run's end user, or null"),
    at: z.string().describe("When it happened (ISO 8601, workflow time)"),
    data,
  });
}

export const EVENT_SCHEMAS = {
  "call.approval_requested": envelope("call.approval_requested", EVENT_DATA["call.approval_requested"].data),
  "call.input_requested": envelope("call.input_requested", EVENT_DATA["call.input_requested"].data),
  "call.outcome_unknown": envelope("call.outcome_unknown", EVENT_DATA["call.outcome_unknown"].data),
  "credentials.expired": envelope("credentials.expired", EVENT_DATA["credentials.expired"].data),
  "tool.schema_changed": envelope("tool.schema_changed", EVENT_DATA["tool.schema_changed"].data),
  "run.completed": envelope("run.completed", EVENT_DATA["run.completed"].data),
  "run.failed": envelope("run.failed", EVENT_DATA["run.failed"].data),
  "run.cancelled": envelope("run.cancelled", EVENT_DATA["run.cancelled"].data),
  "run.rolled_back": envelope("run.rolled_back", EVENT_DATA["run.rolled_back"].data),
  "run.approval_requested": envelope("run.approval_requested", EVENT_DATA["run.approval_requested"].data),
} satisfies Record<EventType, z.ZodType>;

type DocumentedEvent<T extends EventType> = z.infer<(typeof EVENT_SCHEMAS)[T]>;

// Drift checks: what the workflow emits must fit what the document says a harness receives.
type Fits<Actual extends Documented, Documented> = [Actual, Documented];
export type _EventChecks = [
  Fits<HarnessEvent<"call.approval_requested">, DocumentedEvent<"call.approval_requested">>,
  Fits<HarnessEvent<"call.input_requested">, DocumentedEvent<"call.input_requested">>,
  Fits<HarnessEvent<"call.outcome_unknown">, DocumentedEvent<"call.outcome_unknown">>,
  Fits<HarnessEvent<"credentials.expired">, DocumentedEvent<"credentials.expired">>,
  Fits<HarnessEvent<"tool.schema_changed">, DocumentedEvent<"tool.schema_changed">>,
  Fits<HarnessEvent<"run.completed">, DocumentedEvent<"run.completed">>,
  Fits<HarnessEvent<"run.failed">, DocumentedEvent<"run.failed">>,
  Fits<HarnessEvent<"run.cancelled">, DocumentedEvent<"run.cancelled">>,
  Fits<HarnessEvent<"run.rolled_back">, DocumentedEvent<"run.rolled_back">>,
  Fits<HarnessEvent<"run.approval_requested">, DocumentedEvent<"run.approval_requested">>,
];
