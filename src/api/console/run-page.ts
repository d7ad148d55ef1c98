/**
 * A run's page: what it is and waits for, the decisions a person can take on it, its result or
 * error, its calls as a timeline and in full, its script with the lines that call tools marked,
 * and a form to fork it with an edited script. All but the fork form is the page's live region,
 * which the page's script asks for again (`/live`) while the run is open: the region carries a
 * digest of the run's state, and the answer is 204 while the state is the same, so an open run
 * that only sleeps costs one status read per poll and no redraw.
 */
import { createHash } from "node:crypto";
import type { JournalView, RunInput } from "../../shared/index.ts";
import type { RunService, RunView } from "../run-service.ts";
import { decisionsHtml, runActionsHtml, type FormContext, type FormOutcome } from "./decision-forms.ts";
import { timeHtml, valueHtml } from "./format.ts";
import { html, type Html } from "./html.ts";
import { page, problem, type Viewer } from "./layout.ts";
import { runLink, runPath, toolsetLink } from "./links.ts";
import { callHtml } from "./run-calls.ts";
import { timelineHtml } from "./run-timeline.ts";
import { forkFormHtml, scriptHtml } from "./script-view.ts";
import { journalWaits, openBadge, parkedWaits, waitWords } from "./waits.ts";

/** Calls per page of a run's calls; a longer run's calls are paged. */
export const CALLS_PER_PAGE = 200;
const JOURNAL_BYTES = 4 * 1024 * 1024;

export interface RunState {
  view: RunView;
  start: RunInput;
  journal?: JournalView & { nextAfterSeq?: number };
  /** Why the calls could not be read (no worker answered). */
  journalProblem?: string;
  /** The page's first call is the one after this seq. */
  after: number;
}

/** Reads what a run's page shows; 404 (HttpError) for a run the viewer's namespace does not own. */
export function createRunReader(runs: RunService) {
  // A run's start never changes: kept for the runs read last, so a poll reads only what moves.
  const starts = new Map<string, RunInput>();
  async function startOf(runId: string, namespace: string): Promise<RunInput> {
    const key = `${namespace}/${runId}`;
    const known = starts.get(key);
    if (known) return known;
    const start = await runs.startInput(runId, namespace);
    if (starts.size >= 100) starts.delete(starts.keys().next().value ?? "");
    starts.set(key, start);
    return start;
  }
  return async function readRun(runId: string, namespace: string, after: number): Promise<RunState> {
    const view = await runs.get(runId, namespace);
    const [start, journal] = await Promise.all([
      startOf(runId, namespace),
      runs.journal(runId, namespace, after, CALLS_PER_PAGE, JOURNAL_BYTES).then(
        (page) => ({ page }),
        (error: unknown) => ({ problem: error instanceof Error ? error.message : String(error) }),
      ),
    ]);
    return "page" in journal
      ? { view, start, journal: journal.page, after }
      : { view, start, journalProblem: journal.problem, after };
  };
}

/** A digest of what the live region shows of the run: the same digest, the same region. */
export function stateVersion(state: RunState): string {
  const { view, journal, journalProblem } = state;
  return createHash("sha256")
    .update(JSON.stringify({ view, entries: journal?.entries, next: journal?.nextAfterSeq, journalProblem }))
    .digest("base64url")
    .slice(0, 22);
}

const isOpen = (view: RunView): boolean => view.status === "running" || view.status === "parked";

function outcomeHtml(state: RunState): Html {
  const { view } = state;
  const id = view.id;
  if (view.status === "completed")
    return html`<h2>Result</h2>
      ${valueHtml(view.result, `${runPath(id)}/result`)}`;
  if (view.error)
    return html`<h2>Error</h2>
      <p><code>${view.error.type}</code>: ${view.error.message}</p>
      ${view.error.details === undefined ? "" : valueHtml(view.error.details)}`;
  if (view.rollback) {
    const r = view.rollback;
    return html`<h2>Rollback (${r.state})</h2>
      <ul>
        ${r.reverted.map((c) => html`<li>call ${c.seq} <code>${c.tool}</code> reverted by call ${c.revertSeq}</li>`)}
        ${r.notReverted.map((c) => html`<li>call ${c.seq} <code>${c.tool}</code> not reverted: ${c.reason}</li>`)}
      </ul>`;
  }
  return html``;
}

function waitsHtml(state: RunState, now: number): Html {
  const { view } = state;
  if (!isOpen(view)) return html``;
  const parked = view.parked ?? [];
  const waits = [
    ...parkedWaits(parked, view.scriptApproval?.state === "waiting"),
    ...journalWaits(state.journal?.entries ?? [], new Set(parked.map((p) => p.seq))),
  ];
  return html`<h2>Waits for</h2>
    ${
      waits.length === 0
        ? html`<p class="muted">Nothing: its script is taking a step.</p>`
        : html`<ul class="waits">
            ${waits.map((w) => html`<li>${waitWords(w, now)}</li>`)}
          </ul>`
    }`;
}

function callsHtml(state: RunState, now: number): Html {
  const { view, journal } = state;
  if (!journal)
    return html`<h2>Calls</h2>
      ${problem(`The run's calls could not be read: ${state.journalProblem ?? ""}`)}`;
  const entries = journal.entries;
  const pager = html`${state.after > 0 ? html`<a href="${runPath(view.id)}">First calls</a> ` : ""}${
    journal.nextAfterSeq === undefined
      ? ""
      : html`<a href="${runPath(view.id)}?after=${journal.nextAfterSeq}">Later calls</a>`
  }`;
  return html`<h2>Calls</h2>
    ${
      journal.fork
        ? html`<p>
            Fork of ${runLink(journal.fork.parentRunId)}:
            ${journal.fork.divergedAt === null ? "every call so far was reused from it" : `calls from ${journal.fork.divergedAt} on were sent for real`}.
          </p>`
        : ""
    }
    ${timelineHtml(entries, now, isOpen(view))} ${entries.map((entry) => callHtml(view.id, entry, now))}
    <p class="pager">${pager}</p>`;
}

function headerHtml(state: RunState, now: number): Html {
  const { view, start } = state;
  const badge = isOpen(view)
    ? openBadge(view.status as "running" | "parked", journalWaits(state.journal?.entries ?? [], new Set()))
    : view.status;
  return html`<h1>Run <span class="mono">${view.id}</span> <span class="badge ${badge}" data-state>${badge}</span></h1>
    <dl class="facts">
      <dt>Toolset</dt>
      <dd>${toolsetLink(start.toolsetId)}</dd>
      ${
        view.endUser
          ? html`<dt>End user</dt>
              <dd>${view.endUser}</dd>`
          : ""
      }
      <dt>Started</dt>
      <dd>${view.startedAt ? timeHtml(Date.parse(view.startedAt), now) : "—"}</dd>
      ${
        view.closedAt
          ? html`<dt>Ended</dt>
              <dd>${timeHtml(Date.parse(view.closedAt), now)}</dd>`
          : ""
      }
      ${
        view.temporalUrl
          ? html`<dt>In Temporal</dt>
              <dd><a href="${view.temporalUrl}">its workflow</a></dd>`
          : ""
      }
    </dl>`;
}

/** The live region of the run's page. */
export function liveHtml(state: RunState, ctx: FormContext, now: number = Date.now()): Html {
  const { view, start } = state;
  const open = isOpen(view);
  const src = `${runPath(view.id)}/live${state.after > 0 ? `?after=${state.after}` : ""}`;
  return html`<section
    id="run-live"
    data-live="${src}"
    data-version="${stateVersion(state)}"
    ${open ? "" : html`data-live-final`}
  >
    ${headerHtml(state, now)} ${waitsHtml(state, now)} ${decisionsHtml(ctx, view)}
    ${
      open
        ? html`<h2>Act on the run</h2>
            ${runActionsHtml(ctx, Object.keys(start.toolset.mcpServers))}`
        : ""
    }
    ${outcomeHtml(state)} ${callsHtml(state, now)}
    <h2>Input</h2>
    ${valueHtml(start.input, `${runPath(view.id)}/input`)}
    <h2>Script</h2>
    ${scriptHtml(start.script, state.journal?.entries ?? [])}
  </section>`;
}

export function runPageHtml(state: RunState, viewer: Viewer, outcome?: FormOutcome): Html {
  const ctx: FormContext = { runId: state.view.id, viewer, outcome };
  return page({
    title: `Run ${state.view.id}`,
    viewer,
    main: html`<p id="live-status" class="sr-only" aria-live="polite"></p>
      ${liveHtml(state, ctx)}
      <h2>Fork with an edited script</h2>
      ${forkFormHtml(ctx, state.start.script, state.start.input, isOpen(state.view))}`,
  });
}
