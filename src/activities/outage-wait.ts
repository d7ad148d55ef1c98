/**
 * How an MCP call rides out its server being down. An attempt that could not reach the server
 * sent nothing, so trying again is always safe, whatever the tool's policy; it is tried again
 * within the same attempt, with a backoff, for as long as the call's timeout allows. So a call
 * never fails because its server was down for less than its timeout, and the attempts Temporal
 * counts (and the journal reports) are sends that may have reached the server.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { McpCallError, McpConnectError } from "../mcp/index.ts";

/** The backoff between tries of a server that could not be reached. */
export const OUTAGE_BACKOFF = { initialMs: 500, coefficient: 2, maximumMs: 10_000 } as const;

/** Whether a failure is the server not being reached: nothing of the call left this process. */
export function neverReachedServer(error: unknown): boolean {
  if (error instanceof McpConnectError) return error.reason === "unreachable" || error.reason === "timedOut";
  if (error instanceof McpCallError)
    return (
      !error.outcomeUnknown &&
      (error.reason === "unreachable" || error.reason === "timedOut" || error.reason === "interrupted")
    );
  return false;
}

export interface OutageWait {
  /**
   * Waits out the next backoff (cut short at the budget's end) before another try; false, without
   * waiting, once the budget is spent. Rejects when `signal` aborts (the activity was cancelled).
   */
  beforeRetry(signal: AbortSignal): Promise<boolean>;
  /** Time since the first failed try. */
  readonly elapsedMs: number;
  /** Tries made so far that did not reach the server. */
  readonly tries: number;
}

/** An outage's budget: `budgetMs` from the first try (the call's timeout). */
export function createOutageWait(budgetMs: number, now: () => number = Date.now): OutageWait {
  const began = now();
  let backoff: number = OUTAGE_BACKOFF.initialMs;
  let tries = 1;
  return {
    async beforeRetry(signal) {
      // The last try comes at the budget's end, not a backoff before it.
      const remaining = budgetMs - (now() - began);
      if (remaining <= 0) return false;
      await sleep(Math.min(backoff, remaining), undefined, { signal });
      backoff = Math.min(backoff * OUTAGE_BACKOFF.coefficient, OUTAGE_BACKOFF.maximumMs);
      tries += 1;
      return true;
    },
    get elapsedMs() {
      return now() - began;
    },
    get tries() {
      return tries;
    },
  };
}
