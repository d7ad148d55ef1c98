/**
 * Emits a harness event from a workflow: each event is delivered by its own child workflow
 * (abandoned by its parent, so the run may end while delivery retries). Its workflow id is the
 * event id, so a replayed or continued run never delivers one event twice.
 */
import { ParentClosePolicy, startChild, workflowInfo } from "@temporalio/workflow";
import { eventId, type EventType } from "../shared/events.ts";
import type { deliverEventWorkflow } from "./deliver-event.ts";

export async function emitEvent(namespace: string, runId: string, type: EventType, data: Record<string, unknown>, discriminator?: string | number): Promise<void> {
  const id = eventId(runId, type, discriminator);
  try {
    await startChild<typeof deliverEventWorkflow>("deliverEventWorkflow", {
      workflowId: `event/${id}`,
      taskQueue: workflowInfo().taskQueue,
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: "REJECT_DUPLICATE",
      args: [{ namespace, event: { id, type, runId, at: new Date(Date.now()).toISOString(), data } }],
    });
  } catch (error) {
    // Already started by an earlier execution of this run: it is being (or was) delivered.
    if ((error as { name?: string }).name !== "WorkflowExecutionAlreadyStartedError") throw error;
  }
}
