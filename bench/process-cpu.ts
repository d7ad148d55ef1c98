/**
 * CPU time used by each process of the stack (the bench with the API, the workers, the MCP
 * server, the Temporal dev server), read from /proc on Linux, so a measurement can say which
 * process spent the time per call. Elsewhere it reads nothing and the report says so.
 */
import { readdirSync, readFileSync } from "node:fs";

export type ProcessName = "temporal" | "workers" | "bench" | "mcp";
export type CpuSnapshot = Partial<Record<ProcessName, number>>;

/** USER_HZ: the unit of utime and stime in /proc/<pid>/stat; 100 on every Linux we run on. */
const TICKS_PER_SECOND = 100;

function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces) start at its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}

/** The pid of the process whose command line has all of these parts, if /proc can tell. */
export function findPid(parts: string[]): number | undefined {
  try {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
        if (parts.every((part) => cmdline.includes(part))) return Number(entry);
      } catch {
        // The process ended while we looked.
      }
    }
  } catch {
    return undefined;
  }
  return undefined;
}

export function cpuSnapshot(pids: Partial<Record<ProcessName, number>>): CpuSnapshot {
  const snapshot: CpuSnapshot = {};
  for (const [name, pid] of Object.entries(pids) as [ProcessName, number | undefined][]) {
    const ms = pid === undefined ? undefined : cpuMsOf(pid);
    if (ms !== undefined) snapshot[name] = ms;
  }
  return snapshot;
}

export function cpuDelta(before: CpuSnapshot, after: CpuSnapshot): CpuSnapshot {
  const delta: CpuSnapshot = {};
  for (const name of Object.keys(after) as ProcessName[]) {
    const a = after[name];
    const b = before[name];
    if (a !== undefined && b !== undefined) delta[name] = a - b;
  }
  return delta;
}

export function addCpu(into: CpuSnapshot, delta: CpuSnapshot): void {
  for (const name of Object.keys(delta) as ProcessName[]) into[name] = (into[name] ?? 0) + (delta[name] ?? 0);
}
