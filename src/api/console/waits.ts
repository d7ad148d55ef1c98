/**
 * What an open run waits for, in words a person reads at a glance: "approval of call 2
 * `tickets.create_ticket`", "signal `go` until 14:00", "sleeping until …", "credentials for
 * `github` (run scope)". Calls parked for a decision come from the run's status (its parked
 * calls, its script's approval); the waits of the built-ins (sleep, signals, a child run) from
 * its journal on a run's page, and from the lines the run keeps as its current details on the
 * list of runs, where reading every run's journal would cost too much. A line this file does not
 * know is shown as the run wrote it.
 */
import type { JournalEntry } from "../../shared/index.ts";
import { html, type Html } from "./html.ts";
import { timeHtml } from "./format.ts";

export type Wait =
  | { kind: "script" }
  | { kind: "parked"; seq: number; tool: string; reason: string; scope?: string | null }
  | { kind: "sleep"; seq: number; until: number }
  | { kind: "signal"; seq: number; name: string; until?: number }
  | { kind: "child"; seq: number; runId: string }
  | { kind: "activity"; text: string };

/** A parked call as a run's status lists it. */
export interface ParkedCall {
  seq: number;
  tool: string;
  reason: string;
  details?: Record<string, unknown>;
}

export function parkedWaits(parked: readonly ParkedCall[] | undefined, scriptWaiting: boolean): Wait[] {
  const waits: Wait[] = scriptWaiting ? [{ kind: "script" }] : [];
  for (const p of [...(parked ?? [])].sort((a, b) => a.seq - b.seq)) {
    const scope = p.details?.["scope"];
    waits.push({
      kind: "parked",
      seq: p.seq,
      tool: p.tool,
      reason: p.reason,
      ...(typeof scope === "string" || scope === null ? { scope } : {}),
    });
  }
  return waits;
}

const argsOf = (entry: JournalEntry): Record<string, unknown> =>
  typeof entry.args === "object" && entry.args !== null ? (entry.args as Record<string, unknown>) : {};

/** The built-ins' waits among a run's calls in flight, and how many others run or queue. */
export function journalWaits(entries: readonly JournalEntry[], parkedSeqs: ReadonlySet<number>): Wait[] {
  const waits: Wait[] = [];
  let running = 0;
  let queued = 0;
  for (const entry of entries) {
    if (entry.status !== "running" && entry.status !== "pending") continue;
    if (parkedSeqs.has(entry.seq)) continue;
    const args = argsOf(entry);
    if (entry.tool === "rewind.sleep")
      waits.push({ kind: "sleep", seq: entry.seq, until: entry.issuedAt + Number(args["ms"]) });
    else if (entry.tool === "rewind.waitForSignal")
      waits.push({
        kind: "signal",
        seq: entry.seq,
        name: String(args["name"]),
        ...(typeof args["timeoutMs"] === "number" ? { until: entry.issuedAt + args["timeoutMs"] } : {}),
      });
    else if (entry.tool === "rewind.workflows.result")
      waits.push({ kind: "child", seq: entry.seq, runId: String(args["runId"]) });
    else if (entry.status === "running") running += 1;
    else queued += 1;
  }
  if (running > 0) waits.push({ kind: "activity", text: `running ${running} call${running === 1 ? "" : "s"}` });
  if (queued > 0) waits.push({ kind: "activity", text: `${queued} call${queued === 1 ? "" : "s"} queued` });
  return waits;
}

/** Lines of the current details that say a call is parked: the run's status tells those, with more. */
const PARKED_LINE = /^waiting for (approval|input|credentials|a decision)\b/;
const SLEEP_LINE = /^sleeping until (\S+): call (\d+)$/;
const SIGNAL_LINE = /^waiting for signal ("(?:[^"\\]|\\.)*")(?: \(until (\S+)\))?: call (\d+)$/;
const CHILD_LINE = /^waiting for run (\S+): call (\d+)$/;

function parseJsonString(text: string): string {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "string" ? value : text;
  } catch {
    return text;
  }
}

/** The built-ins' waits and what else the run does, from its current details (one line per thing). */
export function detailsWaits(details: string | undefined): Wait[] {
  const waits: Wait[] = [];
  for (const line of (details ?? "").split("\n")) {
    if (!line || PARKED_LINE.test(line) || line.startsWith("run (continued as new)")) continue;
    const sleep = SLEEP_LINE.exec(line);
    const signal = SIGNAL_LINE.exec(line);
    const child = CHILD_LINE.exec(line);
    if (sleep) waits.push({ kind: "sleep", seq: Number(sleep[2]), until: Date.parse(sleep[1] ?? "") });
    else if (signal)
      waits.push({
        kind: "signal",
        seq: Number(signal[3]),
        name: parseJsonString(signal[1] ?? ""),
        ...(signal[2] ? { until: Date.parse(signal[2]) } : {}),
      });
    else if (child) waits.push({ kind: "child", seq: Number(child[2]), runId: child[1] ?? "" });
    else waits.push({ kind: "activity", text: line });
  }
  return waits;
}

const SCOPES: Record<string, string> = { run: "run scope", endUser: "end-user scope", toolset: "toolset scope" };

const groupOf = (tool: string): string => tool.slice(0, Math.max(0, tool.indexOf(".")));

function parkedWords(wait: Extract<Wait, { kind: "parked" }>): Html {
  const call = html`call ${wait.seq} <code>${wait.tool}</code>`;
  const scope = typeof wait.scope === "string" ? (SCOPES[wait.scope] ?? `${wait.scope} scope`) : "none were sent";
  switch (wait.reason) {
    case "approval":
      return html`approval of ${call}`;
    case "elicitationRequested":
      return html`an answer to the question of ${call}`;
    case "credentialsExpired":
      return html`credentials for <code>${groupOf(wait.tool)}</code> (${scope}), call ${wait.seq}`;
    case "insufficientScope":
      return html`credentials with more scope for <code>${groupOf(wait.tool)}</code> (${scope}), call ${wait.seq}`;
    case "schemaChanged":
      return html`a decision on ${call}: its tool's schema changed`;
    case "outcomeUnknown":
      return html`a decision on ${call}: its outcome is unknown`;
    default:
      return html`${wait.reason}: ${call}`;
  }
}

/** One wait in words; `now` decides how much of a time is said (the hour alone on the same day). */
export function waitWords(wait: Wait, now: number): Html {
  switch (wait.kind) {
    case "script":
      return html`approval of its script`;
    case "parked":
      return parkedWords(wait);
    case "sleep":
      return html`sleeping until ${timeHtml(wait.until, now)}`;
    case "signal":
      return wait.until === undefined
        ? html`signal <code>${wait.name}</code>`
        : html`signal <code>${wait.name}</code> until ${timeHtml(wait.until, now)}`;
    case "child":
      return html`run <a href="/ui/runs/${encodeURIComponent(wait.runId)}">${wait.runId}</a> to end`;
    case "activity":
      return html`${wait.text}`;
  }
}

/** The badge an open run wears: parked, or, while running, what its waits say it does. */
export function openBadge(status: "running" | "parked", waits: readonly Wait[]): string {
  if (status === "parked") return "parked";
  const kinds = new Set(waits.map((w) => w.kind));
  if (kinds.size === 1 && kinds.has("sleep")) return "sleeping";
  if (kinds.has("signal") || kinds.has("child")) return "waiting";
  return "running";
}
