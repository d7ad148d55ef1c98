/**
 * The request shapes of the API, in one place so that validation and the OpenAPI document
 * come from the same definitions.
 */
import { z } from "zod";
import { MAX_SCRIPT_BYTES } from "../declarations/index.ts";
import { TOOLSET_ID_PATTERN, credentialsBody } from "../contract/index.ts";

export { credentialsBody, type CredentialsBody } from "../contract/index.ts";

/**
 * An end user as the harness names it, 1 to 200 characters. Never NUL: Temporal's visibility
 * store cannot be queried for a value holding it (the query fails until the client gives up), so
 * such a name could be written but never listed or renewed.
 */
export const endUserName = z
  .string()
  .min(1, "the end user must be 1 to 200 characters")
  .max(200, "the end user must be 1 to 200 characters")
  .refine((name) => !name.includes("\u0000"), "the end user must not contain NUL (U+0000)");

export const startRunBody = z.strictObject({
  script: z
    .string()
    .min(1, "script must not be empty")
    .max(MAX_SCRIPT_BYTES, `script must be at most ${MAX_SCRIPT_BYTES} characters`),
  input: z.unknown().optional(),
  toolset: z
    .string()
    .regex(TOOLSET_ID_PATTERN, "toolset must be a toolset id (ts_ followed by 64 hex digits)")
    .optional(),
  endUser: endUserName.optional(),
  credentials: credentialsBody.optional(),
  approveScript: z
    .boolean()
    .optional()
    .describe(
      "Wait, before the script's first step, for the harness to approve it (POST /v1/runs/{id}/approve or …/reject); the toolset's `scriptApproval: required` asks the same of every run",
    ),
  onFailure: z
    .enum(["fail", "rollback"])
    .optional()
    .describe(
      "What the run does when its script fails (throws, hits a limit or is stuck): `fail` (the default), or `rollback` (revert its completed calls and end `rolledBack`)",
    ),
});

/** What `by` may be: who the decision is on behalf of, as the caller names them (a person, a bot). */
const decidedBy = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\p{Cc}]*$/u, "by may not hold control characters")
  .describe(
    "On whose behalf the caller decides (a user, a reviewer bot); recorded with the API key's principal in the journal",
  );

/** The run states a list can filter by (`failed` takes in terminated and timed-out runs). */
export const RUN_STATES = ["running", "parked", "completed", "failed", "cancelled", "rolledBack"] as const;

const instant = (name: string) =>
  z.iso
    .datetime({ offset: true, error: `${name} must be an ISO 8601 date-time, e.g. 2026-11-30T09:00:00Z` })
    .transform((value) => new Date(value));

/** A signal's name in `POST /v1/runs/{id}/signals/{name}`: as a script's `waitForSignal` takes it. */
export const signalName = z.string().min(1).max(200);

export const rollbackRunBody = z.strictObject({
  by: decidedBy.optional(),
  reason: z.string().min(1).max(1000).optional().describe("Why, in words: recorded with the rollback"),
});

export const listRunsQuery = z.strictObject({
  pageSize: z.coerce.number().int().min(1).max(1000).default(50),
  pageToken: z.string().max(4096).optional(),
  status: z
    .enum(RUN_STATES)
    .optional()
    .describe("Only runs in this state (`failed` includes terminated and timed-out runs)"),
  toolset: z
    .string()
    .regex(TOOLSET_ID_PATTERN, "toolset must be a toolset id (ts_ followed by 64 hex digits)")
    .optional()
    .describe("Only runs of this toolset"),
  endUser: endUserName.optional().describe("Only runs started for this end user"),
  startedAfter: instant("startedAfter").optional().describe("Only runs started at or after this time (ISO 8601)"),
  startedBefore: instant("startedBefore").optional().describe("Only runs started before this time (ISO 8601)"),
});

export type ListRunsQuery = z.infer<typeof listRunsQuery>;

export const journalQuery = z.strictObject({
  afterSeq: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(200),
  /** A page stops once its entries pass this many bytes of JSON (it always holds at least one). */
  maxBytes: z.coerce
    .number()
    .int()
    .min(1024)
    // The workflow serializes a page in one synchronous turn: a page never asks it for more than this.
    .max(8 * 1024 * 1024)
    .default(4 * 1024 * 1024),
});

export const rejectCallBody = z.strictObject({
  reason: z.string().min(1).max(2000).optional(),
  by: decidedBy.optional(),
});

/** `POST …/approve` and `…/resume`: optionally, on whose behalf. */
export const decideCallBody = z.strictObject({
  by: decidedBy.optional(),
});

/** `POST …/resolve`: the result of a call parked on an unknown outcome, which the script gets as if the tool had answered. */
export const resolveCallBody = z.strictObject({
  result: z
    .unknown()
    .describe("The call's result, as JSON; it must fit the tool's output schema when the tool has one (else 422)"),
  by: decidedBy.optional(),
});

/** `POST …/fail`: why the harness fails a call parked on an unknown outcome. */
export const failCallBody = rejectCallBody;

/** `POST /v1/runs/{id}/calls/{seq}/elicitation`: the answer to the input a call's server asked for. */
export const elicitationAnswerBody = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("accept"),
    content: z
      .record(z.string(), z.unknown())
      .describe("The answer; it must fit the schema the server asked for (else 422)"),
  }),
  z.strictObject({ action: z.literal("decline") }),
  z.strictObject({ action: z.literal("cancel") }),
]);

export const eventsEndpointBody = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: "url must be an http or https URL" }),
  secret: z
    .string()
    .regex(/^whsec_[A-Za-z0-9+/]{16,}={0,2}$/, "secret must be a Standard Webhooks secret: whsec_ followed by base64")
    .optional(),
});

export const forkRunBody = z.strictObject({
  script: z.string().min(1).max(MAX_SCRIPT_BYTES),
  input: z.unknown().optional(),
  /** What happens to the parent if it is still running: kept (default) or cancelled. */
  parent: z.enum(["keep", "cancel"]).default("keep"),
  /** The new run's own credentials; without them it inherits the parent's (as last renewed). */
  credentials: credentialsBody.optional(),
});

/** Bytes as proto3 JSON writes them: base64, standard or URL-safe alphabet, padding optional. */
const base64 = z.string().regex(/^[A-Za-z0-9+/_-]*={0,2}$/, "must be base64");

/** The most payloads one codec request may carry (the Web UI sends those of one event or so). */
export const MAX_CODEC_PAYLOADS = 1000;

/**
 * A Temporal Payload in proto3 JSON: metadata values and data as base64. Fields this API does
 * not know (a newer server's) are kept, and a payload that is not a reference goes back as sent.
 */
export const codecPayload = z.looseObject({
  metadata: z.record(z.string(), base64).nullable().optional(),
  data: base64.nullable().optional(),
  externalPayloads: z
    .array(z.looseObject({ sizeBytes: z.union([z.string().regex(/^\d+$/), z.number().int().min(0)]).optional() }))
    .nullable()
    .optional()
    .describe("Set on an External Storage reference: the stored payload's size"),
});

/** `POST /v1/codec/decode|encode`: a Temporal Payloads message as the Codec Server protocol sends it. */
export const codecBody = z.object({
  payloads: z.array(codecPayload).max(MAX_CODEC_PAYLOADS, `at most ${MAX_CODEC_PAYLOADS} payloads per request`),
});
