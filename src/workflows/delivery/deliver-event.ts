/**
 * One event's delivery, as its own workflow (id = the event id): the run that emits it may end
 * at once, and the delivery still retries, with backoff, for as long as the endpoint is down
 * (up to three days), surviving worker and server restarts.
 */
import { proxyActivities } from "@temporalio/workflow";
import type { Activities } from "../../activities/index.ts";
import type { DeliverEventInput } from "../../shared/index.ts";

const { deliverEvent } = proxyActivities<Activities>({
  startToCloseTimeout: "30 seconds",
  scheduleToCloseTimeout: "3 days",
  retry: { initialInterval: "1 second", backoffCoefficient: 2, maximumInterval: "5 minutes" },
});

export async function deliverEventWorkflow(input: DeliverEventInput): Promise<{ delivered: boolean }> {
  return deliverEvent(input);
}
