/**
 * Where the suite's CPU goes, file by file: with `REWIND_TEST_CPU_LOG=<file>` set, each test
 * file appends one JSON line with the CPU its worker process spent on it (user and system, its
 * own and that of the child processes it reaped: stacks, CLIs, servers it started) and its wall
 * time. Test files share worker processes, so wall time alone says little: a file that waits
 * costs nothing while another runs beside it. `node test/helpers/cpu-report.ts <file>` sums the
 * lines up. Without the variable this does nothing.
 *
 * Linux only (it reads /proc/self/stat); elsewhere the lines carry wall time alone.
 */
import { appendFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll } from "vitest";
import { REPO_ROOT } from "./paths.ts";

const logFile = process.env["REWIND_TEST_CPU_LOG"];

/** The process's CPU in seconds, its own and its reaped children's; undefined off Linux. */
function processCpu(): { own: number; children: number } | undefined {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = (i: number) => Number(fields[i]) / 100;
    // utime, stime, cutime, cstime are fields 14–17 of stat(5), 12–15 after the name and state.
    return { own: ticks(11) + ticks(12), children: ticks(13) + ticks(14) };
  } catch {
    return undefined;
  }
}

if (logFile) {
  // This file runs again before each test file, so from here on is that file's: its imports too.
  const startCpu = processCpu();
  const startWall = performance.now();
  afterAll(({}, suite) => {
    const endCpu = processCpu();
    const filePath = "filepath" in suite && typeof suite.filepath === "string" ? suite.filepath : suite.name;
    const line = {
      file: path.relative(REPO_ROOT, filePath),
      wallS: Math.round(performance.now() - startWall) / 1000,
      ...(startCpu && endCpu
        ? {
            ownCpuS: Math.round((endCpu.own - startCpu.own) * 100) / 100,
            childCpuS: Math.round((endCpu.children - startCpu.children) * 100) / 100,
          }
        : {}),
    };
    appendFileSync(logFile, JSON.stringify(line) + "\n");
  });
}
