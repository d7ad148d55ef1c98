/**
 * Each call of a run in full, below its timeline: its idempotency key, times, attempts, the
 * scope of the credentials it was sent with, who decided it while it was parked, its arguments,
 * its result or error, its server's questions and their answers, its progress and its part in a
 * rollback. Arguments and results are shown as text, cut past a bound; the whole value is a link
 * away and is read only when followed.
 */
import type { JournalEntry } from "../../shared/index.ts";
import { duration, jsonText, timeHtml, valueHtml } from "./format.ts";
import { html, type Html } from "./html.ts";
import { runPath } from "./links.ts";

const SCOPES: Record<string, string> = { run: "the run's own", endUser: "the end user's", toolset: "the toolset's" };

function facts(rows: [string, Html | string | number | undefined][]): Html {
  return html`<dl class="facts">
    ${rows
      .filter(([, value]) => value !== undefined && value !== "")
      .map(
        ([name, value]) =>
          html`<dt>${name}</dt>
            <dd>${value}</dd>`,
      )}
  </dl>`;
}

function decider(entry: JournalEntry, now: number): Html | undefined {
  const d = entry.decidedBy;
  if (!d) return undefined;
  return html`${d.decision} by <span class="mono">${d.principal}</span>${d.by ? html` for ${d.by}` : ""} at
    ${timeHtml(d.at, now)}`;
}

function rollbackOf(entry: JournalEntry): string | undefined {
  const r = entry.rollback;
  if (!r) return undefined;
  return r.outcome === "reverted"
    ? `reverted by call ${r.revertSeq}`
    : `not reverted: ${r.reason ?? "no reason given"}`;
}

function inputsOf(entry: JournalEntry, now: number): Html {
  if (!entry.inputs?.length) return html``;
  return html`<h4>Questions its server asked</h4>
    <ul>
      ${entry.inputs.map(
        (input) =>
          html`<li>
            ${timeHtml(input.requestedAt, now)}: “${input.message}” —
            ${input.outcome ? html`answered <strong>${input.outcome}</strong>` : html`<strong>waiting for an answer</strong>`}
            ${input.content ? html`<pre class="value">${jsonText(input.content)}</pre>` : ""}
          </li>`,
      )}
    </ul>`;
}

function outcomeOf(entry: JournalEntry, base: string): Html {
  if (entry.error)
    return html`<h4>Error</h4>
      <p><code>${entry.error.code}</code>: ${entry.error.message}</p>
      ${entry.error.details === undefined ? "" : valueHtml(entry.error.details)}`;
  if (entry.status === "completed")
    return html`<h4>Result</h4>
      ${valueHtml(entry.result, `${base}/result`)}`;
  return html``;
}

export function callHtml(runId: string, entry: JournalEntry, now: number): Html {
  const base = `${runPath(runId)}/calls/${entry.seq}`;
  const ran =
    entry.startedAt !== undefined && entry.completedAt !== undefined ? entry.completedAt - entry.startedAt : undefined;
  const progress = entry.progress;
  return html`<details class="call" id="call-${entry.seq}" ${entry.status === "parked" ? html`open` : ""}>
    <summary>
      <strong>${entry.seq}</strong> <code>${entry.tool}</code>
      <span class="badge ${entry.status}">${entry.status}</span>
      ${entry.attempts > 1 ? html`<span class="muted">${entry.attempts} attempts</span>` : ""}
    </summary>
    ${facts([
      ["idempotency key", html`<code>${runId}/${entry.seq}</code>`],
      ["attempts", entry.attempts],
      ["issued", timeHtml(entry.issuedAt, now)],
      ["started", entry.startedAt === undefined ? undefined : timeHtml(entry.startedAt, now)],
      [
        "ended",
        entry.completedAt === undefined
          ? undefined
          : html`${timeHtml(entry.completedAt, now)}${ran === undefined ? "" : ` (${duration(ran)})`}`,
      ],
      [
        "credentials",
        entry.credentials
          ? `${SCOPES[entry.credentials] ?? entry.credentials} (${entry.credentials} scope)`
          : undefined,
      ],
      ["decided", decider(entry, now)],
      [
        "reused from",
        entry.fromParent
          ? html`run <a class="mono" href="${runPath(entry.fromParent)}">${entry.fromParent}</a>`
          : undefined,
      ],
      ["reverts call", entry.revertOf],
      ["rollback", rollbackOf(entry)],
      [
        "progress",
        progress
          ? `${progress.progress}${progress.total === undefined ? "" : ` of ${progress.total}`}${progress.message ? `: ${progress.message}` : ""}`
          : undefined,
      ],
    ])}
    <h4>Arguments</h4>
    ${valueHtml(entry.args, `${base}/args`)} ${outcomeOf(entry, base)} ${inputsOf(entry, now)}
  </details>`;
}
