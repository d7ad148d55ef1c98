/**
 * The size of a payload found in a history: as the history holds it, and its real size — a
 * payload kept in External Storage is a small reference in history, whose real size the
 * reference records.
 */
import type { Payload } from "@temporalio/common";
import {
  decodeReferencePayload,
  isReferencePayload,
} from "@temporalio/common/lib/internal-non-workflow/extstore-helpers.js";
import proto from "@temporalio/proto";

type HistoryPayload = proto.temporal.api.common.v1.IPayload;

export function payloadSizes(payload: HistoryPayload): { real: number; inHistory: number } {
  const inHistory = proto.temporal.api.common.v1.Payload.encode(payload).finish().byteLength;
  if (isReferencePayload(payload as Payload))
    return { real: decodeReferencePayload(payload as Payload).sizeBytes, inHistory };
  return { real: inHistory, inHistory };
}

/** Real and in-history bytes of an execution's input (its first event's payloads). */
export function startInputSizes(history: proto.temporal.api.history.v1.IHistory): { real: number; inHistory: number } {
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  const sizes = payloads.map(payloadSizes);
  return {
    real: sizes.reduce((sum, s) => sum + s.real, 0),
    inHistory: sizes.reduce((sum, s) => sum + s.inHistory, 0),
  };
}
