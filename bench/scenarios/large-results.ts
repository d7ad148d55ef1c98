/**
 * Large results: runs of N sequential calls of the MCP server's `blob` tool, which answers text of
 * 1 KB, 100 KB, 1 MB or 10 MB (a new seed for every call, so no store holds the bytes already),
 * made by a Rewind run started through the API and by the plain workflow with the baseline's
 * plain activity, and, for the floor of moving the bytes, directly with the MCP client pool. Both
 * workflows keep payloads over the same threshold (256 KiB) out of history with
 * Temporal's External Storage and Rewind's file driver, each on its own folder. For each size it
 * reports the median time per call, history bytes per call (every execution's history as fetched,
 * protobuf-encoded, summed), payload bytes in that history, bytes added to the store and the
 * largest event, and the workers' CPU per call. Rounds rotate which goes first; one extra round
 * first warms all three.
 */
import { randomUUID } from "node:crypto";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import proto from "@temporalio/proto";
import type { BenchContext } from "../context.ts";
import { resultValue } from "../../src/mcp/index.ts";
import { rewindRun } from "../drivers.ts";
import { fetchHistories, summarizeHistories } from "../history.ts";
import { addCpu, cpuDelta, cpuSnapshot, type CpuSnapshot } from "../process-cpu.ts";
import type { BenchStack } from "../stack.ts";
import { median, since } from "../stats.ts";

type System = "plain" | "rewind";

export interface LargeResultSide {
  /** Each measured run's time, start to result, ms. */
  samples: number[];
  medianMs: number;
  perCallMs: number;
  /** Protobuf-encoded size of every execution's history, over calls (median of the runs). */
  historyBytesPerCall: number;
  /** Bytes of the payloads in that history (references where a payload was stored), over calls. */
  payloadBytesPerCall: number;
  /** Bytes the run added to its file store, over calls (median of the runs). */
  storeBytesPerCall: number;
  /** The largest single history event, protobuf-encoded (largest of the runs). */
  largestEventBytes: number;
  eventsPerCall: number;
  executions: number;
  /** CPU ms per call by process, over the measured runs. */
  cpuPerCall: CpuSnapshot;
}

export interface LargeResultRow {
  bytes: number;
  calls: number;
  /** The same calls made directly with the MCP client pool: each run's ms, and median per call. */
  direct: { samples: number[]; perCallMs: number };
  rewind: LargeResultSide;
  plain: LargeResultSide;
  /** Rewind's median time per call over the plain workflow's. */
  timeRatio: number;
  /** Rewind's history bytes per call over the plain workflow's. */
  historyRatio: number;
}

/** What a model would write: N sequential calls, keeping only the total length. */
export function blobsScript(): string {
  return `import { svc } from "rewind:tools";

export default async function main(input: { n: number; bytes: number; seed: string }) {
  let total = 0;
  for (let i = 0; i < input.n; i++) {
    const text = (await svc.blob({ bytes: input.bytes, seed: input.seed + "/" + (i + 1) })) as unknown as string;
    total += text.length;
  }
  return total;
}
`;
}

/** Total size of the files under `dir` (0 while it does not exist). */
async function dirBytes(dir: string): Promise<number> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch {
    return 0;
  }
  let total = 0;
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    try {
      total += (await stat(path.join(entry.parentPath, entry.name))).size;
    } catch {
      // A temporary file renamed while we looked: its bytes are counted under its new name.
    }
  }
  return total;
}

export interface Measured {
  ms: number;
  historyBytes: number;
  payloadBytes: number;
  storeBytes: number;
  largestEvent: number;
  events: number;
  executions: number;
  cpu: CpuSnapshot;
}

async function plainBlobsRun(
  stack: BenchStack,
  n: number,
  bytes: number,
): Promise<{ id: string; ms: number; result: unknown }> {
  const started = performance.now();
  const id = `plain_${randomUUID()}`;
  const handle = await stack.plainClient.workflow.start("plainBlobs", {
    taskQueue: stack.plainTaskQueue,
    workflowId: id,
    args: [{ url: stack.mcpUrl, n, bytes }],
  });
  const result = await handle.result();
  return { id, ms: since(started), result };
}

/** The same calls, one after another, directly with the MCP client pool (no Temporal). */
async function directBlobs(stack: BenchStack, n: number, bytes: number): Promise<number> {
  const started = performance.now();
  const prefix = `direct_${randomUUID()}`;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const key = `${prefix}/${i + 1}`;
    const outcome = await stack.directPool.callTool({
      url: stack.mcpUrl,
      poolKey: stack.mcpUrl,
      name: "blob",
      arguments: { bytes, seed: key },
      meta: { "codes.rewind/idempotency-key": key },
      timeoutMs: 5 * 60_000,
    });
    total += (resultValue(outcome) as string).length;
  }
  if (total !== n * bytes) throw new Error(`direct calls received ${total} bytes, expected ${n * bytes}`);
  return since(started);
}

export async function measureOnce(stack: BenchStack, system: System, n: number, bytes: number): Promise<Measured> {
  const dir = stack.payloadDirs[system];
  const storeBefore = await dirBytes(dir);
  const cpuBefore = cpuSnapshot(stack.pids);
  const done =
    system === "rewind"
      ? await rewindRun(stack, blobsScript(), { n, bytes, seed: randomUUID() })
      : await plainBlobsRun(stack, n, bytes);
  const cpu = cpuDelta(cpuBefore, cpuSnapshot(stack.pids));
  if (done.result !== n * bytes)
    throw new Error(`${system} run ${done.id} returned ${JSON.stringify(done.result)}, expected ${n * bytes}`);
  const storeBytes = (await dirBytes(dir)) - storeBefore;
  const histories = await fetchHistories(stack.client, done.id);
  const summary = summarizeHistories(histories);
  let historyBytes = 0;
  let largestEvent = 0;
  for (const history of histories) {
    historyBytes += proto.temporal.api.history.v1.History.encode(history).finish().byteLength;
    for (const event of history.events ?? [])
      largestEvent = Math.max(
        largestEvent,
        proto.temporal.api.history.v1.HistoryEvent.encode(event).finish().byteLength,
      );
  }
  return {
    ms: done.ms,
    historyBytes,
    payloadBytes: summary.payloadBytes,
    storeBytes,
    largestEvent,
    events: summary.events,
    executions: summary.executions,
    cpu,
  };
}

export function side(runs: Measured[], calls: number): LargeResultSide {
  const cpu: CpuSnapshot = {};
  for (const run of runs) addCpu(cpu, run.cpu);
  const medianMs = median(runs.map((r) => r.ms));
  return {
    samples: runs.map((r) => r.ms),
    medianMs,
    perCallMs: medianMs / calls,
    historyBytesPerCall: median(runs.map((r) => r.historyBytes)) / calls,
    payloadBytesPerCall: median(runs.map((r) => r.payloadBytes)) / calls,
    storeBytesPerCall: median(runs.map((r) => r.storeBytes)) / calls,
    largestEventBytes: Math.max(...runs.map((r) => r.largestEvent)),
    eventsPerCall: median(runs.map((r) => r.events)) / calls,
    executions: Math.max(...runs.map((r) => r.executions)),
    cpuPerCall: Object.fromEntries(Object.entries(cpu).map(([name, ms]) => [name, ms / (calls * runs.length)])),
  };
}

export async function measureLargeResults(ctx: BenchContext): Promise<LargeResultRow[]> {
  const { rounds } = ctx.sizes.largeResults;
  const rows: LargeResultRow[] = [];
  for (const { bytes, calls } of ctx.sizes.largeResults.sizes) {
    const runs: Record<System, Measured[]> = { plain: [], rewind: [] };
    const direct: number[] = [];
    const order = ["direct", "plain", "rewind"] as const;
    for (let round = -1; round < rounds; round++) {
      const rotated = order.map((_, i) => order[(i + Math.max(round, 0)) % order.length] ?? "direct");
      for (const system of rotated) {
        if (system === "direct") {
          const ms = await directBlobs(ctx.stack, calls, bytes);
          if (round >= 0) direct.push(ms);
          continue;
        }
        const measured = await measureOnce(ctx.stack, system, calls, bytes);
        if (round >= 0) runs[system].push(measured);
      }
      const last = (system: System) => runs[system].at(-1)?.ms.toFixed(0) ?? "-";
      ctx.log(
        `large results ${bytes} B × ${calls} round ${round < 0 ? "warm-up" : `${round + 1}/${rounds}`}: direct ${direct.at(-1)?.toFixed(0) ?? "-"} ms, plain ${last("plain")} ms, Rewind ${last("rewind")} ms`,
      );
    }
    const rewind = side(runs.rewind, calls);
    const plain = side(runs.plain, calls);
    rows.push({
      bytes,
      calls,
      direct: { samples: direct, perCallMs: median(direct) / calls },
      rewind,
      plain,
      timeRatio: rewind.perCallMs / plain.perCallMs,
      historyRatio: rewind.historyBytesPerCall / plain.historyBytesPerCall,
    });
  }
  return rows;
}
