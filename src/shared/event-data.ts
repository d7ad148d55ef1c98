/**
 * Builds each event's `data`, typed, in one place: the workflow emits what these return. The
 * fields are set in the order receivers have always seen them, so the JSON stays the same.
 */
import type { CredentialScope } from "./credentials.ts";
import type { RollbackSummary } from "./rollback.ts";
import type {
  ApprovalRequestedData,
  CredentialsExpiredData,
  EventCall,
  EventSchema,
  InputRequestedData,
  OutcomeUnknownData,
  RunApprovalRequestedData,
  RunCancelledData,
  RunCompletedData,
  RunFailedData,
  RunRolledBackData,
  SchemaChangedData,
} from "./events.ts";

export function approvalRequested(call: EventCall, args: unknown): ApprovalRequestedData {
  return { seq: call.seq, tool: call.tool, args };
}

export function inputRequested(
  call: EventCall,
  message: string,
  requestedSchema: Record<string, unknown>,
): InputRequestedData {
  return { seq: call.seq, tool: call.tool, message, requestedSchema };
}

export function outcomeUnknown(call: EventCall, args: unknown, message: string, attempts: number): OutcomeUnknownData {
  return { seq: call.seq, tool: call.tool, args, message, attempts };
}

export function runApprovalRequested(script: string, scriptHash: string, toolset: string): RunApprovalRequestedData {
  return { script, scriptHash, toolset };
}

export function credentialsExpired(
  call: EventCall,
  reason: CredentialsExpiredData["reason"],
  scope: CredentialScope | null,
  scopeAsked: string | undefined,
  endUser: string | undefined,
): CredentialsExpiredData {
  return {
    seq: call.seq,
    tool: call.tool,
    reason,
    scope,
    ...(scopeAsked ? { scopeAsked } : {}),
    ...(endUser ? { endUser } : {}),
  };
}

export function schemaChanged(call: EventCall, pinned: EventSchema, current: EventSchema): SchemaChangedData {
  return { seq: call.seq, tool: call.tool, pinned, current };
}

export function runCompleted(result: unknown): RunCompletedData {
  return { result };
}

export function runFailed(error: { type: string; message: string }): RunFailedData {
  return { error };
}

export function runRolledBack(summary: RollbackSummary): RunRolledBackData {
  return {
    trigger: summary.trigger,
    reverted: summary.reverted,
    notReverted: summary.notReverted,
    unfinished: summary.unfinished,
  };
}

export function runCancelled(unfinished: RunCancelledData["unfinished"]): RunCancelledData {
  return { unfinished };
}
