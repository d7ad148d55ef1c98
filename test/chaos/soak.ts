/**
 * `npm run soak [-- --minutes N --workers W --runs R --long-runs L]`: the chaos driver in rounds
 * for N minutes (default 30) with W worker processes (default 1), printing each round's figures
 * and the running totals, then the totals. Exits non-zero if any promise broke: a stuck or
 * unfinished run, a wrong result, an effect twice, an at-most-once call repeated, an event not
 * delivered, or a fault that hit no run still going.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { findOrInstallTemporalCli } from "../../src/dev/index.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { brokenPromises, runChaos, type ChaosReport } from "./chaos-driver.ts";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "30" },
    runs: { type: "string", default: "20" },
    "long-runs": { type: "string", default: "8" },
    workers: { type: "string", default: "1" },
    kills: { type: "string", default: "10" },
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
  longRuns > runs
) {
  process.stderr.write(
    "usage: npm run soak -- [--minutes 30] [--workers 1] [--runs 20] [--long-runs 8] [--kills 10] [--verbose]\n",
  );
  process.exit(2);
}

const cliPath = await findOrInstallTemporalCli({
  stateDir: path.join(REPO_ROOT, ".rewind"),
  log: (line) => process.stderr.write(`${line}\n`),
});
const until = Date.now() + minutes * 60_000;
const totals = {
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
  stuck: 0,
  unfinished: 0,
  wrongResults: 0,
  duplicateEffects: 0,
  atMostOnceRepeated: 0,
  atMostOnceLost: 0,
  eventsNotDelivered: 0,
  faultsOnNoOpenRun: 0,
};
const log = values.verbose ? (line: string) => process.stderr.write(`  ${line}\n`) : undefined;
while (Date.now() < until) {
  const report: ChaosReport = await runChaos({
    cliPath,
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
