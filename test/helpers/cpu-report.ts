/**
 * Sums up a log written by cpu-per-file.ts (`REWIND_TEST_CPU_LOG=<file> npm test`): the files
 * that spent the most CPU first, with their wall time, and the suite's total.
 *
 *   node test/helpers/cpu-report.ts <log> [--top N]
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface FileCpu {
  file: string;
  wallS: number;
  ownCpuS?: number;
  childCpuS?: number;
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { top: { type: "string", default: "30" } },
});
const logPath = positionals[0];
if (!logPath) {
  console.error("usage: node test/helpers/cpu-report.ts <log> [--top N]");
  process.exit(2);
}

const lines = readFileSync(logPath, "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line) as FileCpu);
const cpuOf = (f: FileCpu) => (f.ownCpuS ?? 0) + (f.childCpuS ?? 0);
lines.sort((a, b) => cpuOf(b) - cpuOf(a));

const total = lines.reduce((sum, f) => sum + cpuOf(f), 0);
const fixed = (n: number, width: number) => n.toFixed(1).padStart(width);
console.log(`${"cpu s".padStart(7)} ${"own".padStart(6)} ${"child".padStart(6)} ${"wall s".padStart(7)}  file`);
for (const f of lines.slice(0, Number(values.top))) {
  console.log(
    `${fixed(cpuOf(f), 7)} ${fixed(f.ownCpuS ?? 0, 6)} ${fixed(f.childCpuS ?? 0, 6)} ${fixed(f.wallS, 7)}  ${f.file}`,
  );
}
const wall = lines.reduce((sum, f) => sum + f.wallS, 0);
console.log(`${fixed(total, 7)} CPU-s in ${lines.length} files (their wall times add up to ${wall.toFixed(0)} s)`);
