/**
 * The console's links to its own pages. Ids in a path are the API's (run and toolset ids match
 * their patterns before a page is drawn) and are encoded all the same: a link never carries
 * anything a run or a server wrote as markup.
 */
import { html, type Html } from "./html.ts";

export const runPath = (runId: string): string => `/ui/runs/${encodeURIComponent(runId)}`;
export const toolsetPath = (toolsetId: string): string => `/ui/toolsets/${encodeURIComponent(toolsetId)}`;

/** `ts_` and the first 12 hex digits of a toolset id. */
export const shortToolset = (id: string): string => (id.length > 15 ? `${id.slice(0, 15)}…` : id);

export function toolsetLink(toolsetId: string, text: string = toolsetId): Html {
  return html`<a class="mono" href="${toolsetPath(toolsetId)}" title="${toolsetId}">${text}</a>`;
}

export function runLink(runId: string): Html {
  return html`<a class="mono" href="${runPath(runId)}">${runId}</a>`;
}
