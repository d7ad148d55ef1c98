/**
 * `rewind payloads prune [--older-than 30d] [--dry-run] [--json]`: deletes stored payloads written
 * before the cut-off (default: the namespace's retention period) that no open run, nor one closed
 * since the cut-off, refers to; see src/payloads/prune.ts for what is kept and why. Talks to Temporal
 * (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS and API key as for the worker) and the payload store (REWIND_PAYLOAD_STORE) directly,
 * like `rewind worker`, not to the API. Answers the exit code: 0 done, 2 wrong arguments; other
 * errors are thrown for the entry point to print.
 */
import { Client } from "@temporalio/client";
import { ConfigError, type Config } from "../../config.ts";
import { createExternalStorage, rewindDataConverter, prunePayloads, storeListing } from "../../payloads/index.ts";
import { connectionSettings } from "../../temporal/index.ts";
import { connectWhenClusterAnswers } from "../cluster-wait-options.ts";
import { parseDuration } from "../../shared/index.ts";
import { parseCommand, UsageError } from "../args.ts";
import { printJson, printLine } from "../output.ts";

const USAGE = "rewind payloads prune [--older-than 30d] [--dry-run] [--json]";

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

async function prune(argv: string[], config: Config): Promise<number> {
  const cmd = parseCommand(argv, { usage: USAGE, strings: ["older-than"], booleans: ["dry-run"] });
  let olderThanMs: number | undefined;
  const olderThan = cmd.string("older-than");
  if (olderThan !== undefined) {
    const parsed = parseDuration(olderThan);
    if ("error" in parsed) throw new UsageError(`--older-than: ${parsed.error}\nusage: ${USAGE}`);
    olderThanMs = parsed.ms;
  }
  const address = config.temporal.address;
  if (!address) throw new ConfigError("rewind payloads prune needs TEMPORAL_ADDRESS (e.g. 127.0.0.1:7233)");
  const storage = storeListing(config.payloads.store);
  const connection = await connectWhenClusterAnswers(
    "rewind payloads prune",
    config,
    connectionSettings(config.temporal, address),
  );
  try {
    const client = new Client({
      connection,
      namespace: config.temporal.namespace,
      dataConverter: rewindDataConverter(createExternalStorage(config.payloads)),
    });
    const result = await prunePayloads({
      client,
      storage,
      dryRun: cmd.flag("dry-run"),
      ...(olderThanMs !== undefined ? { olderThanMs } : {}),
    });
    if (cmd.json) {
      printJson({ store: storage.description, ...result });
    } else {
      printLine(
        `${result.dryRun ? "would delete" : "deleted"} ${plural(result.deleted, "payload")} (${formatBytes(result.bytesDeleted)}) from ${storage.description}; kept ${result.kept}`,
      );
      printLine(
        `kept: payloads written after ${result.cutoff}, and ${plural(result.referenced, "payload")} referenced by ${plural(result.executions, "open or recently closed run")}`,
      );
    }
    return 0;
  } finally {
    await connection.close();
  }
}

/** `rewind payloads <command> …`: answers the exit code. */
export async function runPayloadsCommand(argv: string[], config: Config): Promise<number> {
  try {
    if (argv[0] !== "prune")
      throw new UsageError(
        `${argv[0] && !argv[0].startsWith("-") ? `unknown command "payloads ${argv[0]}"` : "rewind payloads needs a command"}: prune\nusage: ${USAGE}`,
      );
    return await prune(argv.slice(1), config);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`rewind: ${error.message}\n`);
    return 2;
  }
}
