/**
 * Cancelling the run the harness started when it stops: the request, then a short wait for the
 * run to close, while the harness's worker still serves the call the run may be waiting on (so
 * that call hears of the cancellation instead of timing out against a worker that is gone).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { ApiClient } from "../../src/sdk/index.ts";

const WAIT_MS = 10_000;

/** Answers the line to print: the run cancelled, or how far it got. */
export async function cancelRun(api: ApiClient, id: string): Promise<string> {
  try {
    await api.cancelRun(id);
    const until = Date.now() + WAIT_MS;
    for (;;) {
      const { status } = await api.getRun(id);
      if (status === "cancelled") return `cancelled ${id}`;
      if (status !== "running" && status !== "parked") return `${id} ended ${status} before the cancellation`;
      if (Date.now() > until) return `asked to cancel ${id}; it is still ${status}`;
      await sleep(200);
    }
  } catch (error) {
    return `could not cancel ${id}: ${error instanceof Error ? error.message : String(error)}`;
  }
}
