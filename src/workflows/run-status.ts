/**
 * A run's status as the harness sees it (`RewindStatus` search attribute and the status query):
 * running, parked while any call waits for a decision, and how it ended.
 */
import { upsertSearchAttributes } from "@temporalio/workflow";
import { SEARCH_ATTRIBUTES, type RunState } from "../shared/run.ts";

export class RunStatus {
  private current: RunState = "running";

  get state(): RunState {
    return this.current;
  }

  set(next: RunState): void {
    this.current = next;
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.status, value: next }]);
  }
}
