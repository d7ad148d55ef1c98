/**
 * Emits a harness event from a workflow: each event is delivered by its own child workflow
 * (abandoned by its parent, so the run may end while delivery retries). Its workflow id is the
 * event id, so a replayed or continued run never delivers one event twice. What an event says
 * (its toolset, end user and data) travels only in the child's input, never in its id or type,
 * so it can change without a patch.
 */
import { ParentClosePolicy, startChild, workflowInfo } from "@temporalio/workflow";
import { eventId, type EventData, type EventType, type HarnessEvent } from "../../shared/index.ts";
import type { RunInput } from "../../shared/index.ts";
import type { deliverEventWorkflow } from "../delivery/deliver-event.ts";

/** The run an event comes from. */
export type EventSource = Pick<RunInput, "namespace" | "runId" | "toolsetId" | "endUser">;

export async function emitEvent<T extends EventType>(
  run: EventSource,
  type: T,
  data: EventData[T],
  discriminator?: string | number,
): Promise<void> {
  const id = eventId(run.runId, type, discriminator);
  const event: HarnessEvent<T> = {
    id,
    type,
    runId: run.runId,
    toolset: run.toolsetId,
    endUser: run.endUser ?? null,
    at: new Date(Date.now()).toISOString(),
    data,
  };
  try {
    await startChild<typeof deliverEventWorkflow>("deliverEventWorkflow", {
      workflowId: `event/${id}`,
      taskQueue: workflowInfo().taskQueue,
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: "REJECT_DUPLICATE",
      args: [{ namespace: run.namespace, event }],
    });
  } catch (error) {
    // Already started by an earlier execution of this run: it is being (or was) delivered.
    if ((error as { name?: string }).name !== "WorkflowExecutionAlreadyStartedError") throw error;
  }
}
