/**
 * `npm run soak [-- --minutes N]`: the chaos driver in rounds for N minutes (default 30),
 * printing each round's figures and the totals. Exits non-zero if any promise broke.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { findOrInstallTemporalCli } from "../../src/dev/index.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { runChaos, type ChaosReport } from "./chaos-driver.ts";

const { values } = parseArgs({ options: { minutes: { type: "string", default: "30" }, runs: { type: "string", default: "20" } } });
const minutes = Number(values.minutes);
const runs = Number(values.runs);
if (!Number.isFinite(minutes) || minutes <= 0 || !Number.isInteger(runs) || runs < 1) {
  process.stderr.write("usage: npm run soak -- [--minutes 30] [--runs 20]\n");
  process.exit(2);
}

const cliPath = await findOrInstallTemporalCli({ stateDir: path.join(REPO_ROOT, ".rewind"), log: (line) => process.stderr.write(`${line}\n`) });
const until = Date.now() + minutes * 60_000;
const totals = { rounds: 0, runs: 0, completed: 0, kills: 0, serverRestarts: 0, mcpOutages: 0, effects: 0, duplicates: 0, atMostOnce: 0, atMostOnceRepeated: 0, eventsExpected: 0, eventsDelivered: 0, wrong: 0 };
let broken = false;
while (Date.now() < until) {
  const report: ChaosReport = await runChaos({ cliPath, runs, kills: 10, restartServer: true, mcpOutageMs: 3_000, deadlineMs: 300_000 });
  totals.rounds += 1;
  totals.runs += report.runs;
  totals.completed += report.completed;
  totals.kills += report.kills;
  totals.serverRestarts += report.serverRestarts;
  totals.mcpOutages += report.mcpOutages;
  totals.effects += report.effects;
  totals.duplicates += report.duplicateEffects.length;
  totals.atMostOnce += report.atMostOnceCalls;
  totals.atMostOnceRepeated += report.atMostOnceRepeated.length;
  totals.eventsExpected += report.eventsExpected;
  totals.eventsDelivered += report.eventsDelivered;
  totals.wrong += report.wrongResults.length;
  const ok = report.wrongResults.length === 0 && report.duplicateEffects.length === 0 && report.atMostOnceRepeated.length === 0 && report.eventsDelivered === report.eventsExpected && report.completed === report.runs;
  broken ||= !ok;
  process.stdout.write(`round ${totals.rounds}: ${ok ? "ok" : "BROKEN"} ${JSON.stringify(report)}\n`);
}
process.stdout.write(`\nsoak: ${JSON.stringify(totals)}\n`);
process.exitCode = broken ? 1 : 0;
