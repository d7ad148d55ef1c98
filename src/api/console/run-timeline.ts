/**
 * A run's calls as a timeline: one row per call, its bar from the moment the script issued it to
 * the moment it ended (or now, while it goes on), on one time axis for the whole page, so calls
 * made in parallel lie side by side. A bar says how the call spent its time: queued behind the
 * run's limits, parked for a decision (approval, until the decision's time), running (its
 * attempts, their count beside it: one bar covers every retry), waiting for its server's
 * question to be answered; and how it ended. Bars are drawn in SVG with coordinates as
 * attributes (no inline style, which the page's policy forbids); each row says the same in words.
 */
import type { JournalEntry } from "../../shared/index.ts";
import { duration, timeHtml } from "./format.ts";
import { html, type Html } from "./html.ts";

type Segment = { from: number; to: number; kind: "queued" | "parked" | "running" | "completed" | "failed" | "input" };

const WIDTH = 1000;

/** Where the call's time went, as segments on the axis; `end` is where a call still going stops. */
export function segmentsOf(entry: JournalEntry, end: number): Segment[] {
  const segments: Segment[] = [];
  const started = entry.startedAt;
  const finished = entry.completedAt ?? end;
  const decided = entry.decidedBy?.at;
  const before = started ?? finished;
  if (entry.status === "parked" && started === undefined)
    segments.push({ from: entry.issuedAt, to: end, kind: "parked" });
  else if (decided !== undefined && decided >= entry.issuedAt && decided <= before) {
    segments.push({ from: entry.issuedAt, to: decided, kind: "parked" });
    if (before > decided) segments.push({ from: decided, to: before, kind: "queued" });
  } else if (before > entry.issuedAt) segments.push({ from: entry.issuedAt, to: before, kind: "queued" });
  if (started !== undefined) {
    const kind = entry.status === "completed" ? "completed" : entry.status === "failed" ? "failed" : "running";
    segments.push({ from: started, to: finished, kind });
  }
  for (const input of entry.inputs ?? [])
    segments.push({ from: input.requestedAt, to: input.endedAt ?? entry.completedAt ?? end, kind: "input" });
  return segments;
}

/** How a call's time is said while it goes on, and once it ended: the built-ins that wait say they wait. */
const VERBS: Record<string, [string, string]> = {
  "rewind.sleep": ["sleeping for", "slept"],
  "rewind.waitForSignal": ["waiting for", "waited"],
  "rewind.workflows.result": ["waiting for", "waited"],
  "*": ["running for", "ran"],
};

function words(entry: JournalEntry, segments: Segment[]): string {
  const total = (kind: Segment["kind"]) =>
    segments.filter((s) => s.kind === kind).reduce((sum, s) => sum + Math.max(0, s.to - s.from), 0);
  const parts: string[] = [];
  if (total("queued") > 0) parts.push(`queued ${duration(total("queued"))}`);
  if (total("parked") > 0) parts.push(`parked ${duration(total("parked"))}`);
  const ran = total("running") + total("completed") + total("failed");
  if (entry.startedAt !== undefined)
    parts.push(
      `${(VERBS[entry.tool] ?? VERBS["*"])?.[entry.completedAt === undefined ? 0 : 1] ?? ""} ${duration(ran)}`,
    );
  if (total("input") > 0) parts.push(`of which ${duration(total("input"))} waiting for an answer`);
  if (entry.attempts > 1) parts.push(`${entry.attempts} attempts`);
  return parts.join(", ");
}

function bar(segments: Segment[], t0: number, span: number): Html {
  const x = (t: number) => ((t - t0) / span) * WIDTH;
  return html`<svg viewBox="0 0 ${WIDTH} 10" preserveAspectRatio="none" aria-hidden="true" focusable="false">
    ${segments.map((s) => {
      const from = x(s.from);
      const width = Math.max(x(s.to) - from, 3);
      const inset = s.kind === "input" ? html`y="3" height="4"` : html`y="0" height="10"`;
      return html`<rect class="seg-${s.kind}" x="${from.toFixed(1)}" width="${width.toFixed(1)}" ${inset}></rect>`;
    })}
  </svg>`;
}

const LEGEND: [Segment["kind"], string][] = [
  ["queued", "queued"],
  ["parked", "parked for a decision"],
  ["running", "running"],
  ["input", "waiting for an answer"],
  ["completed", "completed"],
  ["failed", "failed"],
];

/** The timeline of `entries`; `now` ends the bars of calls still going while `open`. */
export function timelineHtml(entries: readonly JournalEntry[], now: number, open: boolean): Html {
  if (entries.length === 0) return html`<p class="muted">No calls yet.</p>`;
  const t0 = Math.min(...entries.map((e) => e.issuedAt));
  const known = entries.flatMap((e) => [e.issuedAt, e.startedAt ?? 0, e.completedAt ?? 0, e.decidedBy?.at ?? 0]);
  const end = open ? Math.max(now, ...known) : Math.max(...known);
  const span = Math.max(end - t0, 1);
  return html`<div class="axis" aria-hidden="true">
      <span>${timeHtml(t0, now)}</span><span>+${duration(span)}</span>
    </div>
    <ol class="timeline" aria-label="Calls over time">
      ${entries.map((entry) => {
        const segments = segmentsOf(entry, end);
        return html`<li>
          <span class="label"
            ><a href="#call-${entry.seq}">${entry.seq}</a> <code>${entry.tool}</code>
            <span class="badge ${entry.status}">${entry.status}</span>
            <span class="muted">${words(entry, segments)}</span></span
          >
          ${bar(segments, t0, span)}
        </li>`;
      })}
    </ol>
    <div class="legend" aria-hidden="true">
      ${LEGEND.map(
        ([kind, label]) =>
          html`<span
            ><svg viewBox="0 0 10 10"><rect class="seg-${kind}" width="10" height="10"></rect></svg> ${label}</span
          >`,
      )}
    </div>`;
}
