/**
 * A run's rollback on the wire, as zod schemas: the summary a run's view and its
 * `run.rolled_back` event show (what set it off, what was
 * reverted, what could not be, what never finished). One definition for the API, the events'
 * document and the SDK's client.
 */
import { z } from "zod";

const seq = z.number().int().min(1);
const tool = z.string().describe("`group.tool`");
const workflowTime = z.number().describe("Workflow time, ms since the epoch");

export const rollbackTrigger = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("requested").describe("POST /v1/runs/{id}/rollback"),
    at: workflowTime,
    principal: z.string().optional().describe("The API key that asked, as `decidedBy.principal` of a decision"),
    by: z.string().optional(),
    reason: z.string().optional(),
  }),
  z.object({
    kind: z.literal("scriptFailed").describe('The script failed and the run had `onFailure: "rollback"`'),
    at: workflowTime,
    error: z.object({ type: z.string().describe("A run failure type (docs/errors.md)"), message: z.string() }),
  }),
]);

const rollbackOutcome = {
  trigger: rollbackTrigger,
  reverted: z
    .array(
      z.object({
        seq: seq.describe("The completed call"),
        tool,
        revertSeq: seq.describe("The revert call: its journal entry, and its idempotency key `<run_id>/<revertSeq>`"),
        revertTool: tool,
      }),
    )
    .describe("Calls undone by their revert, newest seq first"),
  notReverted: z
    .array(
      z.object({
        seq: seq.describe("The completed call (or the call whose outcome is unknown)"),
        tool,
        revertTool: tool,
        revertSeq: seq.optional().describe("The revert call, when one was sent"),
        reason: z
          .string()
          .describe(
            "Why: the revert's arguments could not be built (a template path missing), the revert failed or was rejected (its ToolError code and message), or the call's outcome is unknown",
          ),
      }),
    )
    .describe("Calls with a revert policy that were not undone, newest seq first"),
  unfinished: z
    .array(z.object({ seq, tool, status: z.enum(["pending", "running", "parked"]) }))
    .describe(
      "Calls not finished when the script was stopped: never sent (queued, or parked and withdrawn), or waits abandoned",
    ),
};

export const runRolledBackData = z.object(rollbackOutcome);

export const rollbackSummary = z
  .object({
    state: z.enum(["rollingBack", "rolledBack"]).describe("`rollingBack` while reverts are made; then `rolledBack`"),
    ...rollbackOutcome,
  })
  .describe("The run's rollback, once one began");

export type RollbackSummaryBody = z.infer<typeof rollbackSummary>;
