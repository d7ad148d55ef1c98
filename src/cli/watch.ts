/**
 * `--watch`: follows a run by polling `GET /v1/runs/{id}` and its journal until the run closes,
 * showing each call as it starts, is retried, parks (with the command that approves it) and
 * finishes, then the result or error and the Temporal UI link. The exit code is the run's
 * outcome: 0 completed, 1 failed or cancelled; Ctrl-C stops watching, not the run (130).
 */
import { setTimeout as delay } from "node:timers/promises";
import type { RunViewBody } from "../contract/index.ts";
import { RewindApiError, type ApiClient } from "../sdk/api-client.ts";
import { createCallTracker, type CallTracker } from "./call-tracker.ts";
import type { CommandHint } from "./commands/command.ts";
import { formatDuration, full, printJson } from "./output.ts";
import { createWatchView, type WatchView } from "./watch-view.ts";

export interface WatchOptions {
  /** Print only the final run view, as JSON. */
  json: boolean;
  /** Between polls. Default 300 ms. */
  intervalMs?: number;
  /** The first view, when the caller has one (`rewind run --watch` just started the run). */
  initial?: RunViewBody;
  /** How the commands it suggests are written (`CliContext.hint`). */
  hint: CommandHint;
}

const CLOSED = new Set(["completed", "failed", "cancelled", "rolledBack"]);
/** Consecutive failed polls (API restarting, network blip) tolerated before giving up. */
const MAX_POLL_FAILURES = 20;

function transient(error: unknown): boolean {
  return error instanceof RewindApiError && (error.status === 0 || error.status >= 500);
}

async function readJournal(api: ApiClient, run: RunViewBody, tracker: CallTracker): Promise<string[]> {
  const lines: string[] = [];
  let afterSeq: number | undefined = tracker.afterSeq;
  while (afterSeq !== undefined) {
    const page = await api.getJournal(run.id, { afterSeq });
    lines.push(...tracker.update(page.entries, run));
    afterSeq = page.nextAfterSeq;
  }
  return lines;
}

function statusText(run: RunViewBody, tracker: CallTracker, since: number): string {
  const { total, inFlight, parked } = tracker.counts();
  const calls = `${total} call${total === 1 ? "" : "s"}${inFlight > 0 ? `, ${inFlight} in flight` : ""}${parked > 0 ? `, ${parked} parked` : ""}`;
  return `${run.id} ${run.status} · ${calls} · ${formatDuration(Date.now() - since)}`;
}

function outcome(run: RunViewBody, view: WatchView): void {
  const took =
    run.startedAt && run.closedAt ? ` in ${formatDuration(Date.parse(run.closedAt) - Date.parse(run.startedAt))}` : "";
  if (run.status === "completed") view.line(`completed${took}\nresult: ${full(run.result)}`);
  else if (run.status === "cancelled") view.line(`cancelled${took}`);
  else if (run.status === "rolledBack" && run.rollback)
    view.line(
      `rolled back${took}: ${run.rollback.reverted.length} reverted, ${run.rollback.notReverted.length} not reverted`,
    );
  else view.line(`failed${took}: ${run.error ? `${run.error.type}: ${run.error.message}` : "no error reported"}`);
  if (run.temporalUrl) view.line(`temporal: ${run.temporalUrl}`);
}

export async function watchRun(api: ApiClient, runId: string, options: WatchOptions): Promise<number> {
  const view: WatchView = options.json
    ? { line: () => undefined, status: () => undefined, done: () => undefined }
    : createWatchView();
  const tracker = createCallTracker(runId, options.hint);
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once("SIGINT", onSigint);
  const since = Date.now();
  let failures = 0;
  let run = options.initial ?? (await api.getRun(runId));
  let current = true;
  try {
    for (;;) {
      try {
        if (!current) run = await api.getRun(runId);
        current = false;
        for (const line of await readJournal(api, run, tracker)) view.line(line);
        failures = 0;
      } catch (error) {
        if (!transient(error) || ++failures >= MAX_POLL_FAILURES) throw error;
      }
      if (CLOSED.has(run.status) && failures === 0) break;
      view.status(statusText(run, tracker, since));
      await delay(options.intervalMs ?? 300, undefined, { signal: stop.signal }).catch(() => undefined);
      if (stop.signal.aborted) {
        view.done();
        view.line(`stopped watching; ${runId} goes on. Watch again: ${options.hint(`runs watch ${runId}`)}`);
        return 130;
      }
    }
  } finally {
    process.removeListener("SIGINT", onSigint);
    view.done();
  }
  if (options.json) printJson(run);
  else outcome(run, view);
  return run.status === "completed" ? 0 : 1;
}
