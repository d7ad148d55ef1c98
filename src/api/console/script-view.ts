/**
 * A run's script as a person reads it: numbered lines, the lines that call a tool marked and
 * linked to the calls of that tool the run made; and the form that forks the run with an edited
 * script. The script is the one the run runs (its types were stripped, in place, when it
 * started), so a fork may have to add back the types the type-checker asks for: its refusal,
 * with each error's line and column, is shown beside the form with the edited script kept.
 */
import { findCallSites } from "../../declarations/index.ts";
import type { JournalEntry } from "../../shared/index.ts";
import { jsonText } from "./format.ts";
import { html, type Html } from "./html.ts";
import { FORM_FIELD, type FormContext } from "./decision-forms.ts";
import { problem, tokenField } from "./layout.ts";
import { runPath } from "./links.ts";

/** Calls of one line named at most this many times; the rest are counted. */
const NAMED_CALLS = 8;

function callsOfLine(tools: ReadonlySet<string>, entries: readonly JournalEntry[]): Html {
  const seqs = entries.filter((e) => tools.has(e.tool)).map((e) => e.seq);
  const named = seqs.slice(0, NAMED_CALLS).map((seq, i) => html`${i > 0 ? ", " : ""}<a href="#call-${seq}">${seq}</a>`);
  const more = seqs.length > NAMED_CALLS ? ` and ${seqs.length - NAMED_CALLS} more` : "";
  return seqs.length === 0
    ? html`<span class="calls">calls ${[...tools].join(", ")}; no call yet</span>`
    : html`<span class="calls">call${seqs.length === 1 ? "" : "s"} ${named}${more}</span>`;
}

export function scriptHtml(script: string, entries: readonly JournalEntry[]): Html {
  const tools = new Map<number, Set<string>>();
  for (const site of findCallSites(script)) {
    const line = tools.get(site.line) ?? new Set<string>();
    line.add(site.tool);
    tools.set(site.line, line);
  }
  const lines = script.replace(/\n$/, "").split("\n");
  return html`<ol class="script" aria-label="The run's script">
    ${lines.map((text, i) => {
      const called = tools.get(i + 1);
      return called
        ? html`<li class="call" id="line-${i + 1}">
            <span class="sr-only">calls a tool: </span><code>${text || " "}</code>${callsOfLine(called, entries)}
          </li>`
        : html`<li><code>${text || " "}</code></li>`;
    })}
  </ol>`;
}

export function forkFormHtml(ctx: FormContext, script: string, input: unknown, open: boolean): Html {
  const id = "fork";
  const posted = ctx.outcome?.form === id ? ctx.outcome.values : undefined;
  return html`<form method="post" action="${runPath(ctx.runId)}/fork" id="${id}">
    ${tokenField(ctx.viewer)}<input type="hidden" name="${FORM_FIELD}" value="${id}" />
    ${posted ? problem(ctx.outcome?.message) : ""}
    <p class="muted">
      A new run of the same toolset, which reuses this run's finished calls for as long as the new script makes the same
      calls with the same arguments in the same order; from its first different call on, calls are sent for real.
    </p>
    <div class="field">
      <label for="fork-script">Script</label>
      <textarea id="fork-script" name="script" rows="16" required spellcheck="false">
${posted?.["script"] ?? script}</textarea>
    </div>
    <div class="field">
      <label for="fork-input">Input, as JSON <span class="hint">empty: this run's input</span></label>
      <textarea id="fork-input" name="input" rows="3" data-json spellcheck="false">
${posted?.["input"] ?? jsonText(input)}</textarea>
    </div>
    ${
      open
        ? html`<div class="field">
            <label
              ><input
                type="checkbox"
                name="parent"
                value="cancel"
                ${posted?.["parent"] === "cancel" ? html`checked` : ""}
              />
              Cancel this run once the fork starts</label
            >
          </div>`
        : ""
    }
    <button type="submit" class="primary">Start the fork</button>
  </form>`;
}
