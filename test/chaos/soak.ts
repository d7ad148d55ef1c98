/**
 * `npm run soak [-- --minutes N --workers W --runs R --long-runs L]`: the chaos driver in rounds
 * for N minutes (default 30) with W worker processes (default 1), printing each round's figures
 * and the running totals, then the totals. Exits non-zero if any promise broke: a stuck or
 * unfinished run, a wrong result, an effect twice, an at-most-once call repeated, an event not
 * delivered, or a fault that hit no run still going.
 *
 * Each round starts a dev server of its own, unless `--temporal ADDRESS [--namespace NS]` names
 * a cluster (TLS or an API key through the usual TEMPORAL_* settings; the namespace set up by
 * `rewind setup`): then each round starts only its workers, its API and its MCP server, on a
 * task queue and a Rewind namespace of its own, and terminates what it left open. Server restarts
 * happen there only through `--restart-command` (e.g. `scripts/temporal-cluster.sh restart`).
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { parseArgs, promisify } from "node:util";
import { temporalEnvironment } from "../../src/config.ts";
import { findOrInstallTemporalCli } from "../../src/dev/index.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { NO_BROKEN_PROMISES, brokenPromises, runChaos, type ChaosOptions, type ChaosReport } from "./chaos-driver.ts";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "30" },
    runs: { type: "string", default: "20" },
    "long-runs": { type: "string", default: "8" },
    workers: { type: "string", default: "1" },
    kills: { type: "string", default: "10" },
    temporal: { type: "string" },
    namespace: { type: "string" },
    "restart-command": { type: "string" },
    verbose: { type: "boolean", default: false },
  },
});
const minutes = Number(values.minutes);
const runs = Number(values.runs);
const longRuns = Number(values["long-runs"]);
const workers = Number(values.workers);
const kills = Number(values.kills);
const counts = [runs, workers, kills];
if (
  !Number.isFinite(minutes) ||
  minutes <= 0 ||
  !counts.every((n) => Number.isInteger(n) && n >= 1) ||
  !Number.isInteger(longRuns) ||
  longRuns < 0 ||
  longRuns > runs ||
  ((values.namespace !== undefined || values["restart-command"] !== undefined) && values.temporal === undefined)
) {
  process.stderr.write(
    "usage: npm run soak -- [--minutes 30] [--workers 1] [--runs 20] [--long-runs 8] [--kills 10] [--verbose]\n" +
      "                       [--temporal ADDRESS [--namespace NS] [--restart-command 'scripts/temporal-cluster.sh restart']]\n",
  );
  process.exit(2);
}

/** Runs the restart command through the shell, as it was given. */
const restartCommand = values["restart-command"];
const restart = restartCommand
  ? async () => {
      await promisify(execFile)("sh", ["-c", restartCommand], { cwd: REPO_ROOT });
    }
  : undefined;
const temporal: ChaosOptions["temporal"] =
  values.temporal === undefined
    ? {
        cliPath: await findOrInstallTemporalCli({
          stateDir: path.join(REPO_ROOT, ".rewind"),
          log: (line) => process.stderr.write(`${line}\n`),
        }),
      }
    : {
        cluster: {
          env: {
            ...temporalEnvironment(),
            TEMPORAL_ADDRESS: values.temporal,
            ...(values.namespace ? { TEMPORAL_NAMESPACE: values.namespace } : {}),
          },
          ...(restart ? { restart } : {}),
        },
      };
const until = Date.now() + minutes * 60_000;
const totals = {
  temporal: values.temporal ?? "dev server",
  workers,
  rounds: 0,
  runs: 0,
  longRuns: 0,
  completed: 0,
  kills: 0,
  serverRestarts: 0,
  mcpOutages: 0,
  faults: 0,
  faultsOnOpenRuns: 0,
  workerExits: 0,
  effects: 0,
  effectsExpected: 0,
  atMostOnce: 0,
  eventsExpected: 0,
  eventsDelivered: 0,
  terminatedAtEnd: 0,
  ...NO_BROKEN_PROMISES,
};
const log = values.verbose ? (line: string) => process.stderr.write(`  ${line}\n`) : undefined;
while (Date.now() < until) {
  const report: ChaosReport = await runChaos({
    temporal,
    runs,
    longRuns,
    workers,
    kills,
    restartServer: true,
    mcpOutageMs: 3_000,
    deadlineMs: 360_000,
    ...(log ? { log } : {}),
  });
  const broken = brokenPromises(report);
  totals.rounds += 1;
  totals.runs += report.runs;
  totals.longRuns += report.longRuns;
  totals.completed += report.completed;
  totals.kills += report.kills;
  totals.serverRestarts += report.serverRestarts;
  totals.mcpOutages += report.mcpOutages;
  totals.faults += report.faults;
  totals.faultsOnOpenRuns += report.faultsOnOpenRuns;
  totals.workerExits += report.workerExits;
  totals.effects += report.effects;
  totals.effectsExpected += report.effectsExpected;
  totals.atMostOnce += report.atMostOnceCalls;
  totals.eventsExpected += report.eventsExpected;
  totals.eventsDelivered += report.eventsDelivered;
  totals.terminatedAtEnd += report.terminatedAtEnd;
  for (const [kind, count] of Object.entries(broken)) totals[kind as keyof typeof broken] += count;
  const ok = Object.values(broken).every((count) => count === 0);
  const figures = Object.entries(broken)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(", ");
  process.stdout.write(
    `round ${totals.rounds}: ${ok ? "ok" : "BROKEN"} (${figures}; ${report.completed}/${report.runs} completed, ${report.faultsOnOpenRuns}/${report.faults} faults on open runs, ${report.seconds} s)\n`,
  );
  process.stdout.write(`  ${JSON.stringify(report)}\n`);
  process.stdout.write(`  totals so far: ${JSON.stringify(totals)}\n`);
}
const failed = (
  [
    "stuck",
    "unfinished",
    "wrongResults",
    "duplicateEffects",
    "atMostOnceRepeated",
    "atMostOnceLost",
    "eventsNotDelivered",
    "faultsOnNoOpenRun",
  ] as const
).filter((kind) => totals[kind] > 0);
process.stdout.write(`\nsoak: ${JSON.stringify(totals)}\n`);
process.stdout.write(
  failed.length === 0
    ? "soak: every promise held\n"
    : `soak: BROKEN (${failed.map((kind) => `${kind} ${totals[kind]}`).join(", ")})\n`,
);
process.exitCode = failed.length === 0 ? 0 : 1;
