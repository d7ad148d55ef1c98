/**
 * The report's tables for load on one worker — throughput beside plain Temporal with its
 * completion check, and idle (sleeping) runs — and the targets table with each verdict.
 */
import { table } from "./report.ts";
import type { IdleResult } from "./scenarios/idle.ts";
import type { ThroughputResult, ThroughputSide, WorkerFigures } from "./scenarios/throughput.ts";
import { ms } from "./stats.ts";
import type { TargetRow } from "./targets.ts";

const num = (value: number, digits = 1): string => (Number.isFinite(value) ? value.toFixed(digits) : "–");
const rss = (w: WorkerFigures): string =>
  `${num(w.rssBeforeMb, 0)} / ${num(w.peakRssMb, 0)} / ${num(w.rssAfterMb, 0)} MB`;

export function renderThroughput(t: ThroughputResult, workersIdleRssMb: unknown): string {
  const out: string[] = [];
  out.push(
    `\n### Throughput: concurrent runs of 10 sequential echo calls on one worker, Rewind and plain Temporal under the same load\n`,
  );
  const row = (label: string, runs: number, calls: number, s: ThroughputSide): string[] => [
    label,
    `${runs} × ${calls}`,
    ms(s.totalMs),
    num(s.runsPerSec),
    num(s.callsPerSec, 0),
    ms(s.submitMs),
    `${ms(s.start.medianMs)} / ${ms(s.start.p95Ms)}`,
    `${ms(s.runMs.medianMs)} / ${ms(s.runMs.p95Ms)}`,
    rss(s.worker),
    String(s.worker.peakWarmIsolates),
    (["workers", "temporal", "bench", "mcp"] as const).map((p) => ms(s.cpuPerRun?.[p] ?? Number.NaN)).join(" / "),
    s.stepsPerRun ? `${num(s.stepsPerRun.cold, 2)} / ${num(s.stepsPerRun.warm, 1)}` : "–",
  ];
  out.push(
    table(
      [
        "",
        "runs × calls",
        "total",
        "runs/s",
        "calls/s",
        "all started",
        "start median / p95",
        "run median / p95",
        "workers' RSS before / peak / after",
        "peak warm isolates",
        "CPU per run: workers / Temporal / bench+API / MCP",
        "sandbox steps per run: cold / warm",
      ],
      t.rounds.flatMap((r, i) => {
        const of = t.rounds.length > 1 ? ` (round ${i + 1})` : "";
        return [
          row(`plain Temporal${of}`, r.runs, r.callsPerRun, r.plain),
          row(`Rewind${of}`, r.runs, r.callsPerRun, r.rewind),
          ...(r.beside
            ? [
                row(`plain Temporal, started eagerly${of}`, r.runs, r.callsPerRun, r.beside.plain),
                row(`Rewind, API beside the worker${of}`, r.runs, r.callsPerRun, r.beside.rewind),
              ]
            : []),
        ];
      }),
    ),
  );
  out.push(
    `\nRewind / plain runs/s: ${num(t.ratio, 2)}× (median of ${t.rounds.length} round${t.rounds.length > 1 ? "s" : ""}). Start: Rewind's is POST /v1/runs (type-check, start), plain's the Temporal client's start.`,
  );
  const beside = t.rounds.flatMap((r) => (r.beside ? [r.beside.ratio] : []));
  if (beside.length > 0)
    out.push(
      `As \`npm start\` runs it (the API beside the worker: runs started eagerly, their first step carried in their input; plain workflows started eagerly on the worker's connection): Rewind / plain runs/s ${beside.map((ratio) => `${num(ratio, 2)}×`).join(", ")}.`,
    );
  const c = t.completion;
  if (c)
    out.push(
      `Completion check: ${c.completed} of ${c.runs} concurrent Rewind runs (× ${c.callsPerRun} calls) completed in ${ms(c.totalMs)} (${num(c.runsPerSec)} runs/s); workers' RSS before / peak / after ${rss(c.worker)}, peak warm isolates ${c.worker.peakWarmIsolates}${c.firstError ? `; first failure: ${c.firstError}` : ""}.`,
    );
  out.push(
    `The workers' process (Rewind worker and the baseline's plain worker) held ${String(workersIdleRssMb)} MB RSS when it was ready, before any run.`,
  );
  return out.join("\n");
}

export function renderIdle(idle: IdleResult): string {
  const out: string[] = [];
  out.push(`\n### Idle: ${idle.runs} runs that make one call, then sleep on a timer until one moment\n`);
  const sleeping = idle.sleeping.at(-1);
  out.push(
    table(
      ["", "value"],
      [
        ["all POSTs answered", `${ms(idle.submitMs)} (POST median ${ms(idle.postMedianMs)})`],
        ["every run's call made", Number.isFinite(idle.allCalledMs) ? ms(idle.allCalledMs) : "not before the wake-up"],
        ["planned wake-up after the first POST", `${idle.sleepSec} s`],
        ["workers' RSS before", `${num(idle.rssBeforeMb, 0)} MB`],
        [
          `workers' RSS while all sleep (median / max of ${idle.sleeping.length} samples; first, last)`,
          idle.sleeping.length > 0
            ? `${num(idle.sleepingRssMedianMb, 0)} / ${num(idle.sleepingRssMb, 0)} MB (${num(idle.sleeping[0]?.rssMb ?? Number.NaN, 0)}, ${num(sleeping?.rssMb ?? Number.NaN, 0)} MB)`
            : "–",
        ],
        [
          "  main heap used / committed / external, last sample",
          sleeping
            ? `${num(sleeping.heapUsedMb, 0)} / ${num(sleeping.heapTotalMb, 0)} / ${num(sleeping.externalMb, 0)} MB`
            : "–",
        ],
        ["warm isolates held while all sleep", num(idle.sleepingWarmIsolates, 0)],
        ["workers' peak RSS (start, sleep, wake-up)", `${num(idle.peakRssMb, 0)} MB`],
        [
          "completed",
          `${idle.completed} of ${idle.runs}${idle.stillRunning > 0 ? `, ${idle.stillRunning} still running when the wait ended` : ""}${idle.failed > 0 ? `, ${idle.failed} closed otherwise` : ""}`,
        ],
        [idle.stillRunning > 0 ? "wake-up → end of the wait" : "wake-up → last run closed", ms(idle.wakeToAllDoneMs)],
      ],
    ),
  );
  return out.join("\n");
}

export function renderTargets(targets: TargetRow[], mode: unknown): string {
  const out: string[] = [];
  out.push(`\n### Targets\n`);
  out.push(
    table(
      ["target", "measured (median)", "limit", "margin", "verdict", "from"],
      targets.map((t) => [
        t.target,
        t.reduced ? `${t.measured} *` : t.measured,
        t.limit,
        t.margin,
        t.verdict,
        t.source,
      ]),
    ),
  );
  const reduced = targets.filter((t) => t.reduced);
  if (reduced.length > 0)
    out.push(
      `\n* measured at a smaller load than the target's (${String(mode)} run: ${reduced.map((t) => t.reduced).join(", ")}); the verdict holds for that load only.`,
    );
  const count = (verdict: TargetRow["verdict"]) => targets.filter((t) => t.verdict === verdict).length;
  out.push(`\n${count("PASS")} PASS, ${count("FAIL")} FAIL, ${count("NOT MEASURED")} NOT MEASURED.`);
  return out.join("\n");
}
