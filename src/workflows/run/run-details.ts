/**
 * What a run is doing or waiting for, in words: the workflow's current details, which the
 * Temporal UI shows beside the run ("waiting for approval: call 5 tickets.create_ticket",
 * "sleeping until …", "running 3 calls: …"). RunStatus sets them whenever the run's state changes.
 * Current details are not a command (the SDK serves them through its metadata query), so their
 * wording can change without a patch.
 */
import type { JournalEntry, RunState } from "../../shared/index.ts";
import type { ParkDetails, ParkReason } from "./parking.ts";

export interface RunActivity {
  state: RunState;
  /** Why a failed run failed. */
  note?: string | undefined;
  /** Calls parked or held, undecided. */
  parked: { seq: number; tool: string; reason: ParkReason; details: ParkDetails }[];
  /** Calls dispatched and not finished (parked ones included). */
  inFlight: Iterable<JournalEntry>;
}

/** Lines past this many are counted, not listed. */
const MAX_LINES = 12;
/** Running or queued calls named on their line. */
const MAX_NAMED = 5;

const at = (ms: number): string => new Date(ms).toISOString();
const call = (entry: { seq: number; tool: string }): string => `call ${entry.seq} ${entry.tool}`;

function parkedLine(park: RunActivity["parked"][number]): string {
  const scope = park.details.scope ?? "none sent";
  switch (park.reason) {
    case "approval":
      return `waiting for approval: ${call(park)}`;
    case "elicitationRequested":
      return `waiting for input: ${call(park)}`;
    case "schemaChanged":
      return `waiting for a decision on its changed schema: ${call(park)}`;
    case "credentialsExpired":
      return `waiting for credentials (${scope}): ${call(park)}`;
    case "insufficientScope":
      return `waiting for credentials with more scope (${scope}): ${call(park)}`;
    case "outcomeUnknown":
      return `waiting for a decision on its unknown outcome (resolve, retry or fail): ${call(park)}`;
  }
}

/** The line of a built-in that waits, if `entry` is one. */
function waitLine(entry: JournalEntry): string | undefined {
  const args = (entry.args ?? {}) as Record<string, unknown>;
  switch (entry.tool) {
    case "rewind.sleep":
      return `sleeping until ${at(entry.issuedAt + Number(args["ms"]))}: call ${entry.seq}`;
    case "rewind.waitForSignal": {
      const until = typeof args["timeoutMs"] === "number" ? ` (until ${at(entry.issuedAt + args["timeoutMs"])})` : "";
      return `waiting for signal ${JSON.stringify(String(args["name"]))}${until}: call ${entry.seq}`;
    }
    case "rewind.workflows.result":
      return `waiting for run ${String(args["runId"])}: call ${entry.seq}`;
    default:
      return undefined;
  }
}

function named(entries: JournalEntry[]): string {
  const shown = entries
    .slice(0, MAX_NAMED)
    .map((e) => `${e.tool} #${e.seq}`)
    .join(", ");
  return entries.length > MAX_NAMED ? `${shown} and ${entries.length - MAX_NAMED} more` : shown;
}

/** The run's current details: one line per thing it waits for, then what it is running. */
export function describeActivity(activity: RunActivity): string {
  if (activity.state === "completed" || activity.state === "cancelled") return activity.state;
  if (activity.state === "failed") return activity.note ? `failed: ${activity.note}` : "failed";
  if (activity.state === "rolledBack") return "rolled back";
  const lines = [...activity.parked].sort((a, b) => a.seq - b.seq).map(parkedLine);
  const parkedSeqs = new Set(activity.parked.map((p) => p.seq));
  const running: JournalEntry[] = [];
  const queued: JournalEntry[] = [];
  for (const entry of activity.inFlight) {
    if (parkedSeqs.has(entry.seq)) continue;
    const wait = waitLine(entry);
    if (wait) lines.push(wait);
    else if (entry.status === "running") running.push(entry);
    else if (entry.status === "pending") queued.push(entry);
  }
  if (running.length > 0)
    lines.push(`running ${running.length} call${running.length === 1 ? "" : "s"}: ${named(running)}`);
  if (queued.length > 0) lines.push(`${queued.length} call${queued.length === 1 ? "" : "s"} queued: ${named(queued)}`);
  if (lines.length === 0) return "running the script";
  return lines.length > MAX_LINES
    ? [...lines.slice(0, MAX_LINES - 1), `… and ${lines.length - MAX_LINES + 1} more`].join("\n")
    : lines.join("\n");
}
