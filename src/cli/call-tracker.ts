/**
 * Turns successive journal snapshots into what happened since the last one: a call started, was
 * retried, reported progress, parked, was approved, asked for input and got its answer, finished.
 * Polling sees states, not transitions, so the tracker remembers what it showed of each call and
 * reports each change once; a call first seen already finished gets one line with its arguments.
 */
import type { JournalEntryBody, RunViewBody } from "../contract/index.ts";
import type { CommandHint } from "./commands/command.ts";
import { compact, formatDuration, progressText } from "./output.ts";

interface Seen {
  status: JournalEntryBody["status"];
  attempts: number;
  approved: boolean;
  announced: boolean;
  /** When the progress last shown was received. */
  progressAt: number | undefined;
  /** Input requests shown, and those whose outcome was shown. */
  asked: Set<string>;
  ended: Set<string>;
}

type InputRecord = NonNullable<JournalEntryBody["inputs"]>[number];

const OUTCOME_TEXT: Record<NonNullable<InputRecord["outcome"]>, string> = {
  accept: "accepted",
  decline: "declined",
  cancel: "cancelled",
  withdrawn: "withdrawn (the attempt ended first)",
};

const FINAL = new Set(["completed", "failed"]);

export function createCallTracker(runId: string, hint: CommandHint) {
  const seen = new Map<number, Seen>();
  /** Every call up to this seq is finished and shown; journal reads start after it. */
  let settledThrough = 0;

  const name = (e: JournalEntryBody) => `${e.seq} ${e.tool}`;
  const call = (e: JournalEntryBody) => `${name(e)}(${compact(e.args, 80)})`;

  function finished(e: JournalEntryBody, before: Seen | undefined): string {
    const took = e.completedAt !== undefined ? `  ${formatDuration(e.completedAt - (e.startedAt ?? e.issuedAt))}` : "";
    const tries = e.attempts > 1 ? ` after ${e.attempts} attempts` : "";
    const label = before?.announced ? name(e) : call(e);
    if (e.status === "completed")
      return `✓ ${label}${took}${tries}${e.result === undefined || e.result === null ? "" : ` → ${compact(e.result)}`}`;
    return `✗ ${label}${took}${tries} failed: ${e.error ? `${e.error.code}: ${e.error.message}` : "unknown error"}`;
  }

  function parked(e: JournalEntryBody, run: RunViewBody): string[] {
    const parkedCall = run.parked?.find((p) => p.seq === e.seq);
    const details =
      parkedCall?.details && Object.keys(parkedCall.details).length > 0 ? ` ${compact(parkedCall.details, 120)}` : "";
    return [
      `⏸ ${call(e)} waits for ${parkedCall?.reason ?? "approval"}${details}`,
      `    approve: ${hint(`runs approve ${runId} ${e.seq}`)}`,
      `    reject:  ${hint(`runs reject ${runId} ${e.seq}`)}`,
    ];
  }

  /**
   * The call's input requests: each open one asked once (with the command that answers it), and
   * the outcome of each once; of a call that has ended, only the outcomes of requests shown.
   */
  function inputs(e: JournalEntryBody, seen: Seen, ended: boolean): string[] {
    const lines: string[] = [];
    for (const input of e.inputs ?? []) {
      const shown = seen.asked.has(input.requestId);
      if (!shown && !input.outcome && !ended) {
        lines.push(`? ${name(e)} asks: ${input.message}`, `    schema: ${compact(input.requestedSchema, 120)}`);
        lines.push(`    answer: ${hint(`runs answer ${runId} ${e.seq} --accept '{…}' | --decline | --cancel`)}`);
      }
      if (ended && !shown) continue;
      seen.asked.add(input.requestId);
      if (input.outcome && !seen.ended.has(input.requestId)) {
        seen.ended.add(input.requestId);
        lines.push(
          `→ ${name(e)} input ${OUTCOME_TEXT[input.outcome]}${input.outcome === "withdrawn" ? "" : ", the call goes on"}`,
        );
      }
    }
    return lines;
  }

  function changes(e: JournalEntryBody, before: Seen | undefined, run: RunViewBody, seen: Seen): string[] {
    const lines: string[] = [];
    const isFinal = FINAL.has(e.status);
    if (!before && !isFinal) lines.push(`→ ${call(e)}`);
    if (e.approved && !before?.approved && before?.status === "parked") lines.push(`→ ${name(e)} approved, sending`);
    if (!isFinal && e.attempts > 1 && e.attempts > (before?.attempts ?? 1))
      lines.push(`↻ ${name(e)} retrying, attempt ${e.attempts}`);
    if (!isFinal && e.progress && e.progress.at !== before?.progressAt)
      lines.push(`⋯ call ${name(e)} ${progressText(e.progress)}`);
    // A call parked for input is shown by its request (which names the command that answers it).
    const reason =
      run.parked?.find((p) => p.seq === e.seq)?.reason ??
      (e.inputs?.at(-1)?.outcome === undefined && e.inputs?.length ? "elicitationRequested" : undefined);
    const asking = reason === "elicitationRequested";
    lines.push(...inputs(e, seen, isFinal));
    if (e.status === "parked" && before?.status !== "parked" && !asking) lines.push(...parked(e, run));
    if (isFinal && !FINAL.has(before?.status ?? "")) lines.push(finished(e, before));
    return lines;
  }

  return {
    /** Where the next journal read may start (`afterSeq`). */
    get afterSeq(): number {
      return settledThrough;
    },

    /** The lines to show for what changed in `entries` (a journal page from `afterSeq` on). */
    update(entries: JournalEntryBody[], run: RunViewBody): string[] {
      const lines: string[] = [];
      for (const e of entries) {
        const before = seen.get(e.seq);
        const now: Seen = {
          status: e.status,
          attempts: e.attempts,
          approved: e.approved === true,
          announced: (before?.announced ?? false) || !FINAL.has(e.status),
          progressAt: e.progress?.at,
          asked: before?.asked ?? new Set(),
          ended: before?.ended ?? new Set(),
        };
        lines.push(...changes(e, before, run, now));
        seen.set(e.seq, now);
      }
      while (FINAL.has(seen.get(settledThrough + 1)?.status ?? "")) settledThrough++;
      return lines;
    },

    /** Counts for the status line. */
    counts(): { total: number; inFlight: number; parked: number } {
      let inFlight = 0;
      let parkedCount = 0;
      for (const s of seen.values()) {
        if (s.status === "parked") parkedCount++;
        else if (!FINAL.has(s.status)) inFlight++;
      }
      return { total: seen.size, inFlight, parked: parkedCount };
    },
  };
}

export type CallTracker = ReturnType<typeof createCallTracker>;
