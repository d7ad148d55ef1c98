/**
 * Queries only a worker can answer (a run's journal, its status): Temporal holds a query until a
 * worker takes it, and with every worker of the run's queue stopped or restarting it answered a
 * journal read after about 30 s with a deadline the API reported as an internal error. The API
 * waits a bounded time instead and answers 503 `unavailable`, which says to try again.
 */
import type { Client } from "@temporalio/client";
import type { JournalView } from "../shared/index.ts";
import { temporalCallFailure } from "../temporal/index.ts";
import { getJournalQuery, type JournalQueryArgs } from "../workflows/messages.ts";
import { HttpError } from "./http-error.ts";

/**
 * How long a reader of a run's journal waits for a worker: a run that has ended is replayed by
 * the worker before it answers, which takes a second or two for the longest histories.
 */
export const JOURNAL_QUERY_TIMEOUT_MS = 10_000;

export function noWorkerAnswered(runId: string): HttpError {
  return new HttpError(503, "unavailable", `no worker answered for run ${runId}; try again`);
}

/** The query's answer; 503 `unavailable` when no worker answers within `ms` or Temporal gives up first. */
export async function answeredByWorker<T>(runId: string, query: Promise<T>, ms = JOURNAL_QUERY_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(noWorkerAnswered(runId)), ms);
    timer.unref();
  });
  try {
    return await Promise.race([query, timeout]);
  } catch (error) {
    if (temporalCallFailure(error)?.kind === "deadline") throw noWorkerAnswered(runId);
    throw error;
  } finally {
    clearTimeout(timer);
    // A query given up on still ends later; its failure then is nobody's.
    query.catch(() => undefined);
  }
}

/** A page of the run's journal, as its worker answers it (503 when none does in time). */
export function readJournal(client: Client, runId: string, args: JournalQueryArgs): Promise<JournalView> {
  return answeredByWorker(runId, client.workflow.getHandle(runId).query(getJournalQuery, args));
}

/** Entries per page of a whole-journal read. */
const PAGE_ENTRIES = 1000;
/**
 * Bytes of entries (as JSON) per page of a whole-journal read. The workflow answers a query in
 * one synchronous turn of its sandbox, bounded by the SDK's 5 s execution timeout; a page bounds
 * the work of each answer, so a journal of many large results is read in many short queries
 * rather than one that stalls the workflow (and, past the timeout, its worker).
 */
const PAGE_BYTES = 2 * 1024 * 1024;

/** The run's whole journal, a bounded page per query; the first page also brings the batches when asked. */
export async function* journalPages(
  client: Client,
  runId: string,
  options: { withBatches?: boolean } = {},
): AsyncGenerator<JournalView> {
  let afterSeq = 0;
  for (let first = true; ; first = false) {
    const page = await readJournal(client, runId, {
      afterSeq,
      limit: PAGE_ENTRIES,
      maxBytes: PAGE_BYTES,
      ...(first && options.withBatches ? { withBatches: true } : {}),
    });
    yield page;
    const last = page.entries.at(-1);
    if (!last || (page.entries.length < PAGE_ENTRIES && page.truncated !== true)) return;
    afterSeq = last.seq;
  }
}

/** Every entry of the run's journal, read a bounded page at a time; with the batches and start time when asked. */
export async function readWholeJournal(
  client: Client,
  runId: string,
  options: { withBatches?: boolean } = {},
): Promise<Pick<JournalView, "entries" | "startedAt" | "batches">> {
  const entries: JournalView["entries"] = [];
  let first: JournalView | undefined;
  for await (const page of journalPages(client, runId, options)) {
    first ??= page;
    entries.push(...page.entries);
  }
  return {
    entries,
    ...(first?.startedAt === undefined ? {} : { startedAt: first.startedAt }),
    ...(first?.batches === undefined ? {} : { batches: first.batches }),
  };
}
