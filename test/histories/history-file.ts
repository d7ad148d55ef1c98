/**
 * The shape of one file of the replay corpus: a workflow execution's history as Temporal's own
 * protobuf encoding (exact, compact, and readable by any SDK's replayer), where it came from, and, for a run that ended, its cassette (what the runtime check replays).
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import {
  decodeReferencePayload,
  isReferencePayload,
} from "@temporalio/common/lib/internal-non-workflow/extstore-helpers.js";
import proto from "@temporalio/proto";

const { temporal } = proto;

type History = proto.temporal.api.history.v1.IHistory;

export const HISTORY_FORMAT = "rewind.history/1";

export interface HistoryFile {
  format: typeof HISTORY_FORMAT;
  /** The commit whose code recorded it. */
  release: string;
  scenario: string;
  workflowType: string;
  workflowId: string;
  runId: string;
  /** false: recorded while the run waited (what a restarted stack finds). */
  closed: boolean;
  /** 0 for the first execution of a workflow id, 1 after one continue-as-new… */
  execution: number;
  /** The history as Temporal's protobuf, gzipped, in base64 (`decodeHistory` reads it back). */
  history: string;
  /** How many events it holds. */
  events: number;
  cassette?: unknown;
  /** How the run ended, as the API showed it. */
  outcome?: { status: string; result?: unknown; error?: string };
}

export const HISTORIES_DIR = path.resolve(import.meta.dirname);

/** Every corpus file, release by release, as `<release>/<file>` with its content. */
export async function loadCorpus(dir = HISTORIES_DIR): Promise<{ name: string; file: HistoryFile }[]> {
  const found: { name: string; file: HistoryFile }[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .sort((a, b) => a.name.localeCompare(b.name))) {
    for (const name of (await readdir(path.join(dir, entry.name))).filter((n) => n.endsWith(".json")).sort()) {
      const file = JSON.parse(await readFile(path.join(dir, entry.name, name), "utf8")) as HistoryFile;
      if (file.format !== HISTORY_FORMAT) throw new Error(`${entry.name}/${name} is not a ${HISTORY_FORMAT} file`);
      found.push({ name: `${entry.name}/${name}`, file });
    }
  }
  return found;
}

export function encodeHistory(history: History): string {
  return gzipSync(
    temporal.api.history.v1.History.encode(temporal.api.history.v1.History.fromObject(history)).finish(),
  ).toString("base64");
}

/** The sha256 of every stored payload a history refers to (file store references). */
export function referencesIn(encoded: string): string[] {
  const found: string[] = [];
  const walk = (value: unknown): void => {
    if (value === null || typeof value !== "object") return;
    if (Array.isArray(value)) return value.forEach(walk);
    const record = value as Record<string, unknown>;
    if (record["metadata"] !== undefined && record["data"] !== undefined) {
      const payload = record as { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null };
      if (isReferencePayload(payload)) {
        const hash = decodeReferencePayload(payload).claimData["sha256"];
        if (hash) found.push(hash);
      }
      return;
    }
    Object.values(record).forEach(walk);
  };
  walk(temporal.api.history.v1.History.toObject(decodeHistory(encoded) as proto.temporal.api.history.v1.History));
  return found;
}

export function decodeHistory(encoded: string): History {
  return temporal.api.history.v1.History.decode(gunzipSync(Buffer.from(encoded, "base64")));
}
