/**
 * `rewind setup [--retention 30d] [--json]`: prepares the Temporal namespace Rewind runs in
 * (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and the TLS / API key settings, as for the worker):
 * creates it if missing and registers Rewind's search attributes, or prints what the operator must
 * do where the cluster refuses (Temporal Cloud). Safe to run at every deploy, even before the
 * cluster is up: it waits for it as the worker does (REWIND_CONNECT_TIMEOUT bounds the wait).
 * Answers the exit code: 0 ready, 1 the operator must act, 2 wrong arguments; a refused
 * connection is thrown.
 */
import { ConfigError, type Config } from "../../config.ts";
import { parseDuration } from "../../shared/index.ts";
import { connectionSettings, describeTransport, setupNamespace } from "../../temporal/index.ts";
import { connectWhenClusterAnswers } from "../cluster-wait-options.ts";
import { parseCommand, UsageError } from "../args.ts";
import { printJson, printLine } from "../output.ts";

const USAGE = "rewind setup [--retention 30d] [--json]";
const DAY_MS = 86_400_000;

function retentionDays(raw: string | undefined): number {
  if (raw === undefined) return 30;
  const parsed = parseDuration(raw);
  if ("error" in parsed) throw new UsageError(`--retention: ${parsed.error}\nusage: ${USAGE}`);
  if (parsed.ms < DAY_MS || parsed.ms % DAY_MS !== 0)
    throw new UsageError(
      `--retention must be a whole number of days, at least 1 (e.g. 30d), got "${raw}"\nusage: ${USAGE}`,
    );
  return parsed.ms / DAY_MS;
}

async function setup(argv: string[], config: Config): Promise<number> {
  const cmd = parseCommand(argv, { usage: USAGE, strings: ["retention"] });
  const days = retentionDays(cmd.string("retention"));
  const address = config.temporal.address;
  if (!address)
    throw new ConfigError(
      "rewind setup needs TEMPORAL_ADDRESS (the embedded dev server of `rewind dev` sets itself up)",
    );
  const settings = connectionSettings(config.temporal, address);
  const connection = await connectWhenClusterAnswers("rewind setup", config, settings);
  try {
    const report = await setupNamespace(connection, {
      namespace: config.temporal.namespace,
      address,
      retentionDays: days,
    });
    if (cmd.json) {
      printJson({ address, namespace: config.temporal.namespace, ...report });
      return report.ready ? 0 : 1;
    }
    printLine(`Temporal ${address} (${describeTransport(settings)}), namespace "${config.temporal.namespace}"`);
    for (const step of report.steps) printLine(`  ${step}`);
    if (report.ready) {
      printLine("ready: `rewind api` and `rewind worker` can start with these settings");
      return 0;
    }
    if (report.operatorActions.length > 0) {
      printLine("\nto do by hand, then run `rewind setup` again to check:");
      for (const action of report.operatorActions) printLine(`  ${action}`);
    }
    process.stderr.write(`rewind: namespace "${config.temporal.namespace}" is not ready for Rewind yet\n`);
    return 1;
  } finally {
    await connection.close();
  }
}

/** `rewind setup …`: answers the exit code. */
export async function runSetupCommand(argv: string[], config: Config): Promise<number> {
  try {
    return await setup(argv, config);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`rewind: ${error.message}\n`);
    return 2;
  }
}
