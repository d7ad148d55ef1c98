/**
 * The console's list of runs: the namespace's runs newest first, with the list's filters (state,
 * toolset, end user, start time, read with the API's own query schema) and, for each open run,
 * what it waits for in words. The waits of a page's open runs are asked of the runs themselves,
 * all at once: their parked calls from their status, the rest from their current details. The
 * table is a live region: the page's script asks for it again every 5 s, and it is redrawn when
 * a digest of the runs and their waits changed.
 */
import { createHash } from "node:crypto";
import type { Request } from "express";
import { HttpError } from "../http-error.ts";
import { RUN_STATES, listRunsQuery } from "../schemas.ts";
import { parseOrThrow } from "../validate.ts";
import type { RunService } from "../run-service.ts";
import type { RunListItem, RunListPage } from "../run-list.ts";
import { html, type Html } from "./html.ts";
import { page, problem, type Viewer } from "./layout.ts";
import { timeHtml } from "./format.ts";
import { detailsWaits, openBadge, parkedWaits, waitWords, type Wait } from "./waits.ts";
import { shortToolset, toolsetLink } from "./links.ts";

const PAGE_SIZE = 25;
const FILTERS = ["status", "toolset", "endUser", "startedAfter", "startedBefore"] as const;

/** A `datetime-local` value (no zone) is read as UTC, as the form says; anything else goes to the API's schema as given. */
function instant(value: string): string {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)
    ? `${value.length === 16 ? `${value}:00` : value}Z`
    : value;
}

function formValues(req: Request): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name of [...FILTERS, "pageToken"]) {
    const value = req.query[name];
    if (typeof value === "string" && value.trim() !== "") values[name] = value.trim();
  }
  return values;
}

async function waitsOf(runs: RunService, run: RunListItem, namespace: string): Promise<Wait[]> {
  if (run.status !== "running" && run.status !== "parked") return [];
  const [details, view] = await Promise.all([
    runs.currentDetails(run.id, namespace).catch(() => undefined),
    run.status === "parked" ? runs.get(run.id, namespace).catch(() => undefined) : undefined,
  ]);
  return [...parkedWaits(view?.parked, view?.scriptApproval?.state === "waiting"), ...detailsWaits(details)];
}

function filtersForm(values: Record<string, string>): Html {
  const option = (state: string) =>
    html`<option value="${state}" ${values["status"] === state ? html`selected` : ""}>${state}</option>`;
  const text = (name: string, label: string, hint: string, type = "text") =>
    html`<div>
      <label for="f-${name}">${label} <span class="hint">${hint}</span></label>
      <input id="f-${name}" name="${name}" type="${type}" value="${values[name] ?? ""}" />
    </div>`;
  return html`<form class="filters" method="get" action="/ui/runs" aria-label="Filter the runs">
    <div>
      <label for="f-status">State</label>
      <select id="f-status" name="status">
        <option value="">any</option>
        ${RUN_STATES.map(option)}
      </select>
    </div>
    ${text("toolset", "Toolset", "its id, ts_…")} ${text("endUser", "End user", "as the harness names them")}
    ${text("startedAfter", "Started after", "UTC", "datetime-local")}
    ${text("startedBefore", "Started before", "UTC", "datetime-local")}
    <div><button type="submit">Show</button> <a href="/ui/runs">Clear</a></div>
  </form>`;
}

function row(run: RunListItem, waits: Wait[], now: number): Html {
  const open = run.status === "running" || run.status === "parked";
  const badge = open ? openBadge(run.status as "running" | "parked", waits) : run.status;
  return html`<tr>
    <td class="id mono" data-label="Run"><a href="/ui/runs/${run.id}">${run.id}</a></td>
    <td data-label="State"><span class="badge ${badge}">${badge}</span></td>
    <td data-label="Waits for">
      ${
        open
          ? waits.length > 0
            ? html`<ul class="waits">
                ${waits.map((w) => html`<li>${waitWords(w, now)}</li>`)}
              </ul>`
            : html`<span class="muted">nothing it says (no worker answered)</span>`
          : html`<span class="muted">ended</span>`
      }
    </td>
    <td data-label="Toolset">${run.toolset ? toolsetLink(run.toolset, shortToolset(run.toolset)) : "—"}</td>
    <td data-label="End user">${run.endUser ?? "—"}</td>
    <td data-label="Started">${run.startedAt ? timeHtml(Date.parse(run.startedAt), now) : "—"}</td>
    <td data-label="Ended">${run.closedAt ? timeHtml(Date.parse(run.closedAt), now) : "—"}</td>
  </tr>`;
}

/** The list's region: its table (or why there is none), redrawn by the page's script when the runs moved. */
export async function runsRegion(
  runs: RunService,
  req: Request,
  viewer: Viewer,
): Promise<{ region: Html; version?: string }> {
  const values = formValues(req);
  const now = Date.now();
  const live = `/ui/runs/live?${new URLSearchParams(values).toString()}`;
  let listed: RunListPage;
  let waits: Wait[][];
  try {
    const given = Object.fromEntries(
      Object.entries(values).map(([k, v]) => [k, k.startsWith("started") ? instant(v) : v]),
    );
    const { pageToken, ...filters } = parseOrThrow(listRunsQuery, { ...given, pageSize: String(PAGE_SIZE) }, "query");
    listed = await runs.list(viewer.namespace, { pageSize: PAGE_SIZE, pageToken }, filters);
    waits = await Promise.all(listed.runs.map((run) => waitsOf(runs, run, viewer.namespace)));
  } catch (error) {
    if (!(error instanceof HttpError) || error.status !== 400) throw error;
    return { region: html`<div id="runs-live" data-live-final>${problem(error.message)}</div>` };
  }
  const version = createHash("sha256").update(JSON.stringify({ listed, waits })).digest("base64url").slice(0, 22);
  const next = new URLSearchParams({ ...values, ...(listed.nextPageToken ? { pageToken: listed.nextPageToken } : {}) });
  const region = html`<div id="runs-live" data-live="${live}" data-version="${version}" data-live-every="5000">
    ${
      listed.runs.length === 0
        ? html`<p class="notice">No runs${Object.keys(values).length > 0 ? " match these filters" : " yet"}.</p>`
        : html`<table class="cards">
            <caption class="sr-only">
              Runs, newest first
            </caption>
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">State</th>
                <th scope="col">Waits for</th>
                <th scope="col">Toolset</th>
                <th scope="col">End user</th>
                <th scope="col">Started</th>
                <th scope="col">Ended</th>
              </tr>
            </thead>
            <tbody>
              ${listed.runs.map((run, i) => row(run, waits[i] ?? [], now))}
            </tbody>
          </table>`
    }
    ${listed.nextPageToken ? html`<p class="pager"><a href="/ui/runs?${next.toString()}">Older runs</a></p>` : ""}
  </div>`;
  return { region, version };
}

export async function renderRunsPage(runs: RunService, req: Request, viewer: Viewer): Promise<Html> {
  return page({
    title: "Runs",
    viewer,
    main: html`<h1>Runs</h1>
      ${filtersForm(formValues(req))} ${(await runsRegion(runs, req, viewer)).region}`,
  });
}
