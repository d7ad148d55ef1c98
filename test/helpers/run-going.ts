/**
 * For tests that kill a worker or restart the server: asserts, right before the fault, that the
 * run the test is about is still going — Temporal describes it as RUNNING and its journal is not
 * complete (a call is still pending, running or parked, or fewer calls than the script makes have
 * ended). A durability test then can't pass by accident, because its run had already finished
 * its work when the fault came. The journal is read with the run's query, so a worker must be up.
 */
import type { Client } from "@temporalio/client";
import { expect } from "vitest";
import { getJournalQuery } from "../../src/workflows/run/messages.ts";

const OPEN_CALLS = new Set(["pending", "running", "parked"]);

export async function expectRunGoing(
  client: Client,
  runId: string,
  options: { calls?: number } = {},
): Promise<{ ended: number; open: number }> {
  const handle = client.workflow.getHandle(runId);
  const description = await handle.describe();
  expect(description.status.name, `run ${runId} before the fault`).toBe("RUNNING");
  const journal = await handle.query(getJournalQuery, { limit: 1000 });
  const open = journal.entries.filter((entry) => OPEN_CALLS.has(entry.status)).length;
  const ended = journal.entries.length - open;
  const complete = open === 0 && (options.calls === undefined || ended >= options.calls);
  expect(
    complete,
    `run ${runId}'s journal before the fault: ${ended} calls ended, ${open} open${options.calls === undefined ? "" : ` of ${options.calls}`}`,
  ).toBe(false);
  return { ended, open };
}
