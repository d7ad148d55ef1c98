/**
 * Counts the open runs of a task queue, and how many of them are parked, from Temporal's
 * visibility (`RewindStatus`), for the `rewind_runs_open` gauge: the one number no single worker
 * knows. Two count queries per scrape at most once every few seconds, however many scrapers ask.
 * Visibility lags a second or so behind the runs.
 */
import type { Client } from "@temporalio/client";
import type { OpenRunCounts } from "../metrics/index.ts";
import { RUN_WORKFLOW_TYPE, SEARCH_ATTRIBUTES } from "../shared/index.ts";

export interface OpenRunCounterOptions {
  /** Counts younger than this are answered again rather than asked anew. Default 5000 ms. */
  minIntervalMs?: number;
}

const quoted = (value: string): string => `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;

export function createOpenRunCounter(
  client: Client,
  taskQueue: string,
  options: OpenRunCounterOptions = {},
): () => Promise<OpenRunCounts> {
  const open = `WorkflowType = ${quoted(RUN_WORKFLOW_TYPE)} AND ExecutionStatus = "Running" AND TaskQueue = ${quoted(taskQueue)}`;
  const parked = `${open} AND ${SEARCH_ATTRIBUTES.status.name} = "parked"`;
  const minIntervalMs = options.minIntervalMs ?? 5_000;
  let last: { at: number; counts: Promise<OpenRunCounts> } | undefined;

  async function count(): Promise<OpenRunCounts> {
    const [all, waiting] = await Promise.all([client.workflow.count(open), client.workflow.count(parked)]);
    return { running: Math.max(0, all.count - waiting.count), parked: waiting.count };
  }

  return function countOpenRuns() {
    const now = Date.now();
    if (!last || now - last.at >= minIntervalMs) {
      const counts = count();
      last = { at: now, counts };
      // A failed count is asked again at the next scrape.
      counts.catch(() => {
        if (last?.counts === counts) last = undefined;
      });
    }
    return last.counts;
  };
}
