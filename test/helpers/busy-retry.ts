/**
 * Takes a sandbox step again while the machine is too busy to give it its CPU time, as the
 * workflow does (`MachineBusyError`): on a loaded machine a runaway loop can meet the wall-time
 * backstop before its CPU limit, and that verdict is the machine's, not the script's. For tests
 * that call the sandbox directly and expect the script's own verdict.
 */
import { MachineBusyError } from "../../src/sandbox/index.ts";

export async function retryingWhileBusy<T>(step: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (!(error instanceof MachineBusyError) || attempt >= attempts) throw error;
    }
  }
}
