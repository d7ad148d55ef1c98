/**
 * Payloads: (1) runs of N sequential calls answering 1 MB of text each, Rewind against the plain
 * workflow with the same External Storage (each on its own file store, same threshold), per-call
 * time and history bytes (the large-results scenario's measurement, with more rounds at one
 * size); (2) Rewind runs of growing length (echo calls in 16 lanes) and their history bytes per
 * call, summed over every execution, with the input each execution carried over at
 * continue-as-new at its real size (a stored payload counts the bytes it references, not its
 * reference), so a journal carried in full across continue-as-new shows as growth.
 */
import proto from "@temporalio/proto";
import type { BenchContext } from "../context.ts";
import { assertTotal, callsScript, rewindRun } from "../drivers.ts";
import { fetchHistories } from "../history.ts";
import { startInputSizes } from "../payload-size.ts";
import { scaleSizes } from "../scale-sizes.ts";
import { median } from "../stats.ts";
import { measureOnce, side, type LargeResultSide, type Measured } from "./large-results.ts";

export interface PayloadsGrowthRow {
  calls: number;
  ms: number;
  executions: number;
  /** Protobuf-encoded bytes of every execution's history, over calls. */
  historyBytesPerCall: number;
  eventsPerCall: number;
  /** Each execution's input at its real size (stored payloads resolved to their size), bytes. */
  inputBytes: number[];
  /** The same inputs as history holds them (a stored payload is a small reference), bytes. */
  inputBytesInHistory: number[];
}

export interface PayloadsResult {
  oneMb: { bytes: number; calls: number; rewind: LargeResultSide; plain: LargeResultSide; timeRatio: number };
  growth: PayloadsGrowthRow[];
  /** History bytes per call at the longest run over the shortest. */
  historyGrowth: number;
  /** The largest input any execution of the longest run carried (real size), bytes. */
  largestCarriedInputBytes: number;
}

async function growthRow(ctx: BenchContext, calls: number): Promise<PayloadsGrowthRow> {
  const done = await rewindRun(ctx.stack, callsScript(), { n: calls, width: 16 });
  assertTotal("Rewind run", done.result, calls);
  const histories = await fetchHistories(ctx.stack.client, done.id);
  let historyBytes = 0;
  let events = 0;
  const inputBytes: number[] = [];
  const inputBytesInHistory: number[] = [];
  for (const history of histories) {
    historyBytes += proto.temporal.api.history.v1.History.encode(history).finish().byteLength;
    events += history.events?.length ?? 0;
    const sizes = startInputSizes(history);
    inputBytes.push(sizes.real);
    inputBytesInHistory.push(sizes.inHistory);
  }
  ctx.log(
    `payloads: ${calls} calls in ${done.ms.toFixed(0)} ms, ${histories.length} executions, ${(historyBytes / calls).toFixed(0)} history bytes per call, largest input ${Math.max(...inputBytes)} B`,
  );
  return {
    calls,
    ms: done.ms,
    executions: histories.length,
    historyBytesPerCall: historyBytes / calls,
    eventsPerCall: events / calls,
    inputBytes,
    inputBytesInHistory,
  };
}

export async function measurePayloads(ctx: BenchContext): Promise<PayloadsResult> {
  const { bytes, calls, rounds, lengths } = scaleSizes(ctx.sizes).payloads;
  const runs: Record<"plain" | "rewind", Measured[]> = { plain: [], rewind: [] };
  for (let round = -1; round < rounds; round++) {
    for (const system of round % 2 === 0 ? (["rewind", "plain"] as const) : (["plain", "rewind"] as const)) {
      const measured = await measureOnce(ctx.stack, system, calls, bytes);
      if (round >= 0) runs[system].push(measured);
    }
    ctx.log(
      `payloads ${bytes} B × ${calls} round ${round < 0 ? "warm-up" : `${round + 1}/${rounds}`}: plain ${runs.plain.at(-1)?.ms.toFixed(0) ?? "-"} ms, Rewind ${runs.rewind.at(-1)?.ms.toFixed(0) ?? "-"} ms`,
    );
  }
  const rewind = side(runs.rewind, calls);
  const plain = side(runs.plain, calls);
  const growth: PayloadsGrowthRow[] = [];
  for (const length of lengths) growth.push(await growthRow(ctx, length));
  const shortest = growth[0];
  const longest = growth.at(-1);
  return {
    oneMb: {
      bytes,
      calls,
      rewind,
      plain,
      timeRatio: median(runs.rewind.map((r) => r.ms)) / median(runs.plain.map((r) => r.ms)),
    },
    growth,
    historyGrowth: shortest && longest ? longest.historyBytesPerCall / shortest.historyBytesPerCall : Number.NaN,
    largestCarriedInputBytes: longest ? Math.max(...longest.inputBytes) : Number.NaN,
  };
}
