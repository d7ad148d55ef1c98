/**
 * CPU time used by each process of the stack (the bench with the API, the workers, the MCP
 * server, the Temporal dev server — or a cluster's service processes on this machine, summed),
 * read from /proc on Linux, so a measurement can say which process spent the time per call.
 * Elsewhere it reads nothing and the report says so.
 */
import { readdirSync, readFileSync } from "node:fs";

export type ProcessName = "temporal" | "workers" | "bench" | "mcp";
export type CpuSnapshot = Partial<Record<ProcessName, number>>;
/** The processes of each part of the stack: one, or several whose CPU is summed. */
export type StackPids = Partial<Record<ProcessName, number | number[]>>;

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
  return findPids(parts)[0];
}

/** The pids of every process whose command line has all of these parts, as far as /proc can tell. */
export function findPids(parts: string[]): number[] {
  const found: number[] = [];
  try {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
        if (parts.every((part) => cmdline.includes(part))) found.push(Number(entry));
      } catch {
        // The process ended while we looked.
      }
    }
  } catch {
    return found;
  }
  return found;
}

export function cpuSnapshot(pids: StackPids): CpuSnapshot {
  const snapshot: CpuSnapshot = {};
  for (const [name, pid] of Object.entries(pids) as [ProcessName, number | number[] | undefined][]) {
    const each = (pid === undefined ? [] : Array.isArray(pid) ? pid : [pid]).map(cpuMsOf);
    // A part whose processes cannot all be read is not measured (a sum of some would mislead).
    if (each.length > 0 && each.every((ms) => ms !== undefined))
      snapshot[name] = each.reduce((sum: number, ms) => sum + (ms ?? 0), 0);
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
