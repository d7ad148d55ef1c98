/**
 * The response shapes of the API, as zod schemas, so the OpenAPI document describes what the
 * routes answer and the SDK's client is typed by the same definitions. The API's drift checks
 * (src/api/contract-checks.ts) fail `tsc` when a route's TypeScript type and its documented shape
 * drift apart.
 */
import { z } from "zod";
import { API_ERROR_CODES, RETIRED_TOOL_ERROR_CODES, TOOL_ERROR_CODES, RUN_FAILURE_TYPES } from "../shared/index.ts";
import { OMIT_REASONS } from "./omitted-tool.ts";
import { rollbackSummary } from "./rollback-schemas.ts";

export const errorBody = z.object({
  error: z.object({
    code: z.enum(API_ERROR_CODES),
    message: z.string().describe("One sentence saying what was wrong."),
    details: z.unknown().optional().describe("Structured details: the problems of a 400, the diagnostics of a 422…"),
  }),
});

export const diagnostic = z.object({
  file: z.string().describe("`script.ts` for the script itself"),
  line: z.number().int().min(1),
  column: z.number().int().min(1),
  message: z.string(),
  code: z.number().int().describe("TypeScript's diagnostic code (TS2339 → 2339); 0 for a syntax the sandbox refuses"),
});

export const typeCheckErrorBody = z.object({
  error: z.object({
    code: z.literal("typeCheckFailed"),
    message: z.string(),
    details: z.array(diagnostic),
  }),
});

const jsonSchema = z.union([z.record(z.string(), z.unknown()), z.boolean()]);

const pinnedTool = z.object({
  name: z.string(),
  description: z.string().optional(),
  inputSchema: jsonSchema,
  outputSchema: jsonSchema.optional(),
  annotations: z.record(z.string(), z.unknown()).optional(),
});

const pinnedPolicy = z.object({
  onInterruption: z.enum(["retry", "at_most_once"]).optional(),
  onUnknown: z.enum(["fail", "park"]).optional(),
  approval: z.boolean().optional(),
  timeoutMs: z.number().int().optional(),
  heartbeatTimeoutMs: z.number().int().optional(),
  concurrency: z.number().int().optional(),
  revert: z
    .object({ tool: z.string(), args: z.unknown() })
    .optional()
    .describe("The call a rollback makes to undo a completed call of this tool"),
});

export const pinnedToolset = z.object({
  format: z.literal(1),
  base: z.string().optional(),
  mcpServers: z.record(z.string(), z.object({ url: z.string(), tools: z.array(pinnedTool) })),
  hostTools: z.record(z.string(), z.object({ taskQueue: z.string(), tools: z.array(pinnedTool) })),
  http: z.object({ allowedHosts: z.array(z.string()) }).optional(),
  workflows: z.record(z.string(), z.string()),
  policies: z.record(z.string(), pinnedPolicy),
  scriptApproval: z
    .literal("required")
    .optional()
    .describe("Every run of this toolset waits, before its first step, for the harness to approve its script"),
});

export const toolsetView = z.object({ id: z.string(), document: pinnedToolset });

export const omittedTool = z.object({
  server: z.string().describe("The MCP server's group name"),
  tool: z.string(),
  schema: z.enum(["inputSchema", "outputSchema"]).describe("The schema at fault"),
  reason: z
    .enum(OMIT_REASONS)
    .describe(
      "`notASchema`, `invalidSchema` (does not compile), `unresolvableRef` (a `$ref` outside the tool's own schema), `unsupportedDialect` (a `$schema` other than draft-04, -06, -07, 2019-09 or 2020-12) or `unsupportedPattern` (a `pattern` with backreferences or lookaround, which the linear-time engine does not run)",
    ),
  message: z.string(),
});

export const registeredToolsetView = toolsetView.extend({
  omittedTools: z
    .array(omittedTool)
    .describe(
      "Tools of the servers left out of the toolset because a schema of theirs can't be used; not part of the pinned document",
    ),
});

const runState = z.enum(["running", "parked", "completed", "failed", "cancelled", "rolledBack"]);
const timestamp = z.string().describe("ISO 8601");

export const parkedCall = z.object({
  seq: z.number().int(),
  tool: z.string(),
  args: z.unknown().optional(),
  reason: z
    .string()
    .describe(
      "`approval`, `credentialsExpired`, `insufficientScope`, `schemaChanged`, `outcomeUnknown` (resolve, retry or fail it), or `elicitationRequested` (the call is in flight and its server asks for input: answer it with POST …/elicitation)",
    ),
  details: z.record(z.string(), z.unknown()).optional(),
});

export const runView = z.object({
  id: z.string(),
  status: runState,
  toolset: z.string().optional(),
  endUser: z.string().optional(),
  startedAt: timestamp
    .optional()
    .describe("When the run started (its first execution, whatever continue-as-new did since)"),
  closedAt: timestamp.optional(),
  result: z.unknown().optional().describe("The script's return value, once completed"),
  error: z
    .object({
      type: z.enum(Object.values(RUN_FAILURE_TYPES)).describe("Why the run failed; docs/errors.md says what to do"),
      message: z.string(),
      details: z.unknown().optional(),
    })
    .optional(),
  parked: z.array(parkedCall).optional().describe("Calls waiting for the harness, while parked"),
  scriptApproval: z
    .lazy(() => scriptApprovalView)
    .optional()
    .describe("While the run waits, before its first step, for its script's approval (`state: waiting`)"),
  rollback: rollbackSummary
    .optional()
    .describe("Set once a rollback began: while it runs (`state: rollingBack`) and once the run is `rolledBack`"),
  temporalUrl: z.string().optional().describe("The run in the Temporal Web UI, when there is one"),
});

export const forkedRunView = runView.extend({ forkedFrom: z.string().describe("The parent run") });

export const runListItem = runView
  .pick({ id: true, toolset: true, endUser: true, startedAt: true, closedAt: true, temporalUrl: true })
  .extend({
    status: runState.describe(
      "`parked` while a call waits for the harness (from the run's RewindStatus search attribute); `failed` includes terminated and timed-out runs",
    ),
  });

export const runList = z.object({
  runs: z.array(runListItem),
  nextPageToken: z.string().optional(),
});

const toolErrorData = z.object({
  code: z
    .enum([...TOOL_ERROR_CODES, ...RETIRED_TOOL_ERROR_CODES])
    .describe(
      `One of ${TOOL_ERROR_CODES.join(", ")}; or, passed on from a host tool of an older harness, ${RETIRED_TOOL_ERROR_CODES.join(", ")}`,
    ),
  message: z.string(),
  tool: z.string(),
  seq: z.number().int(),
  details: z.unknown().optional(),
});

const workflowTime = z.number().describe("Workflow time, ms since the epoch");

export const decider = z.object({
  principal: z
    .string()
    .describe(
      "The API key that decided: its namespace and a fingerprint of the key (`acme/key-1a2b3c4d`), or `default/loopback` without keys",
    ),
  by: z.string().optional().describe("On whose behalf, as the caller said (`by` in the request)"),
  at: workflowTime,
  decision: z
    .enum(["approved", "rejected", "resumed", "resolved", "retried", "failed"])
    .describe("`resolved`, `retried` and `failed` decide a call parked on an unknown outcome"),
});

const callProgress = z.object({
  progress: z.number(),
  total: z.number().optional(),
  message: z.string().optional(),
  attempt: z.number().int().describe("The attempt that reported it"),
  at: workflowTime.describe("When the run received it"),
});

const callInputRecord = z.object({
  requestId: z.string(),
  attempt: z.number().int(),
  message: z.string(),
  requestedSchema: z.record(z.string(), z.unknown()),
  requestedAt: workflowTime,
  outcome: z
    .enum(["accept", "decline", "cancel", "withdrawn"])
    .optional()
    .describe("The harness's answer, or `withdrawn` (the attempt or call ended first); absent while it waits"),
  content: z.record(z.string(), z.unknown()).optional().describe("An accepted answer's content"),
  endedAt: workflowTime.optional(),
});

export const journalEntry = z.object({
  seq: z.number().int().min(1),
  tool: z.string().describe("`group.tool`, or a built-in such as `rewind.sleep`"),
  args: z.unknown().optional(),
  status: z.enum(["pending", "running", "parked", "completed", "failed"]),
  result: z.unknown().optional(),
  error: toolErrorData.optional(),
  attempts: z.number().int().min(0),
  approved: z.boolean().optional(),
  decidedBy: decider
    .optional()
    .describe(
      "Who last decided the call while it was parked (approve, reject, resume, resolve, retry, fail through the API)",
    ),
  fromParent: z.string().optional().describe("Set when a fork reused its parent's outcome instead of sending the call"),
  revertOf: z
    .number()
    .int()
    .optional()
    .describe("Set on a revert call a rollback made: the seq of the completed call it undoes"),
  rollback: z
    .object({
      outcome: z.enum(["reverted", "notReverted"]),
      revertSeq: z.number().int().optional().describe("The revert call, when one was sent"),
      reason: z.string().optional().describe("Why it was not reverted"),
    })
    .optional()
    .describe("Set on a call with a revert policy once a rollback reached it"),
  credentials: z
    .enum(["run", "endUser", "toolset"])
    .optional()
    .describe("Whose credentials an MCP call was last sent with; absent when it was sent with none"),
  issuedAt: workflowTime,
  startedAt: workflowTime.optional(),
  completedAt: workflowTime.optional(),
  progress: callProgress.optional().describe("The latest progress the call's server reported while it was in flight"),
  inputs: z
    .array(callInputRecord)
    .optional()
    .describe("Input the call's server asked the harness for (elicitations), latest last"),
});

/** Where a run stands on its script's approval, when it asked for one. */
export const scriptApprovalView = z.object({
  state: z.enum(["waiting", "approved", "rejected"]),
  decidedBy: decider.optional().describe("Who approved or rejected the script"),
  reason: z.string().optional().describe("Why it was rejected"),
});

export const scriptDecision = z.object({
  decidedBy: decider.optional().describe("As the run records it"),
});

export const journalView = z.object({
  scriptApproval: scriptApprovalView
    .optional()
    .describe("Set when the run asked for its script's approval: who approved or rejected it"),
  entries: z.array(journalEntry),
  completionOrder: z.array(z.number().int()).describe("Seqs in the order their results reached the script"),
  nextAfterSeq: z.number().int().optional().describe("Set when there are more entries: pass it as afterSeq"),
  fork: z
    .object({ parentRunId: z.string(), divergedAt: z.number().int().nullable() })
    .optional()
    .describe("For a fork: its parent, and the first seq sent for real"),
});

export const cassette = z.object({
  format: z.literal("rewind.cassette/1"),
  runId: z.string(),
  toolsetId: z.string(),
  toolset: pinnedToolset,
  scriptHash: z.string(),
  script: z.string().describe("The recorded script as it ran (types stripped)"),
  input: z.unknown(),
  startedAt: workflowTime,
  entries: z.array(journalEntry),
  batches: z
    .array(z.object({ at: workflowTime, seqs: z.array(z.number().int()) }))
    .describe("Completions in the order and groups they reached the script"),
  runtimeVersion: z
    .number()
    .int()
    .optional()
    .describe("The sandbox runtime the run started on (absent: 1); a replay uses the same"),
});

export const callDecision = z.object({
  seq: z.number().int(),
  decidedBy: decider.optional().describe("As the call's journal entry records it"),
});
export const eventsEndpointView = z.object({
  url: z.string(),
  secret: z.string().optional().describe("Only when generated, and only once"),
});
const workflowDescription = z.string().optional().describe("Given when the script was saved from a run");
export const storedWorkflowView = z.object({
  id: z.string(),
  name: z.string(),
  toolset: z.string(),
  description: workflowDescription,
});
export const workflowView = z.object({
  id: z.string(),
  name: z.string(),
  toolset: z.string(),
  scriptHash: z.string(),
  description: workflowDescription,
  inputType: z
    .string()
    .optional()
    .describe("The input type the script declares, as TypeScript text; `workflows.<name>.start` takes it"),
});
export const credentialsWritten = z.object({
  resumedRuns: z.number().int().min(0).describe("Parked runs woken to send their calls again"),
});
export const runCredentialsRenewed = z.object({ runId: z.string(), scope: z.literal("run") });
export const hookAccepted = z.object({ accepted: z.literal(true) });
export const health = z.object({ ok: z.literal(true) });
export const readiness = z.object({
  ok: z.literal(true),
  temporal: z
    .enum(["reachable", "unchecked"])
    .describe("`reachable`: Temporal answered just now; `unchecked`: this API was built without a Temporal to ask"),
});

const codecPayloadView = z.looseObject({
  metadata: z.record(z.string(), z.string()).optional().describe("Values base64-encoded"),
  data: z.string().optional().describe("Base64"),
});
export const codecPayloads = z.object({
  payloads: z
    .array(codecPayloadView)
    .describe("In the order sent: each reference replaced by the payload it names, every other payload as it was"),
});

export type ApiErrorBody = z.infer<typeof errorBody>;
export type Diagnostic = z.infer<typeof diagnostic>;
export type ToolsetView = z.infer<typeof toolsetView>;
export type RegisteredToolsetView = z.infer<typeof registeredToolsetView>;
export type RunViewBody = z.infer<typeof runView>;
export type RunListBody = z.infer<typeof runList>;
export type CallDecisionBody = z.infer<typeof callDecision>;
export type ScriptDecisionBody = z.infer<typeof scriptDecision>;
export type JournalEntryBody = z.infer<typeof journalEntry>;
export type JournalBody = z.infer<typeof journalView>;
export type EventsEndpointBody = z.infer<typeof eventsEndpointView>;
export type StoredWorkflowBody = z.infer<typeof storedWorkflowView>;
export type WorkflowViewBody = z.infer<typeof workflowView>;
