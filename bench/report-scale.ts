/**
 * The tables of the scenarios that measure Rewind at scale: a 1,000-tool toolset against a
 * 10-tool one, 1 MB results and history as runs grow, and two worker processes. Kept apart from
 * report.ts so each table stays beside the others of its kind.
 */
import { table } from "./report.ts";
import type { LargeToolsetResult } from "./scenarios/large-toolset.ts";
import type { PayloadsResult } from "./scenarios/payloads.ts";
import type { TwoWorkersResult } from "./scenarios/two-workers.ts";
import { ms } from "./stats.ts";

const x = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(2)}×` : "–");
const size = (bytes: number): string => {
  if (!Number.isFinite(bytes)) return "–";
  if (bytes < 1024) return `${bytes.toFixed(0)} B`;
  return bytes < 1024 ** 2 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 ** 2).toFixed(2)} MB`;
};

export function renderLargeToolset(r: LargeToolsetResult): string {
  const { small, large } = r.tools;
  const out = [`\n### Large toolset: ${large} tools against ${small} (medians, p95 in brackets)\n`];
  out.push(
    table(
      ["", `${small} tools`, `${large} tools`, `${large} / ${small}`],
      [
        [
          `POST /v1/toolsets (${r.registration.large.samples.length} after the first)`,
          `${ms(r.registration.small.medianMs)} (${ms(r.registration.small.p95Ms)})`,
          `${ms(r.registration.large.medianMs)} (${ms(r.registration.large.p95Ms)})`,
          x(r.registration.large.medianMs / r.registration.small.medianMs),
        ],
        ["first registration", ms(r.registration.firstMs.small), ms(r.registration.firstMs.large), ""],
        ["declarations (.d.ts)", size(r.dtsBytes.small), size(r.dtsBytes.large), ""],
        ["type-check: first check of a new checker", ms(r.typeCheck.small.coldMs), ms(r.typeCheck.large.coldMs), ""],
        [
          `type-check: warm (${r.typeCheck.large.samples.length} scripts)`,
          `${ms(r.typeCheck.small.medianMs)} (${ms(r.typeCheck.small.p95Ms)})`,
          `${ms(r.typeCheck.large.medianMs)} (${ms(r.typeCheck.large.p95Ms)})`,
          x(r.typeCheck.large.medianMs / r.typeCheck.small.medianMs),
        ],
        ...r.modes.flatMap((m) => {
          const label = m.mode === "sequential" ? `${m.n} calls, sequential` : `${m.n} calls, 16 lanes`;
          return [
            [
              `${label}: per call, whole run (${m.large.samples.length} runs)`,
              ms(m.small.perCallMs),
              ms(m.large.perCallMs),
              x(m.largeOverSmall),
            ],
            [
              `${label}: per call, first call scheduled → last completed`,
              ms(m.callsSpanMs.small / m.n),
              ms(m.callsSpanMs.large / m.n),
              x(m.callsLargeOverSmall),
            ],
            [
              `${label}: workflow task time per call`,
              ms(m.workflowTaskMsPerCall.small),
              ms(m.workflowTaskMsPerCall.large),
              x(m.workflowTaskMsPerCall.large / m.workflowTaskMsPerCall.small),
            ],
            [
              `${label}: run input, real (in history)`,
              `${size(m.startInputBytes.small)} (${size(m.startInputBytesInHistory.small)})`,
              `${size(m.startInputBytes.large)} (${size(m.startInputBytesInHistory.large)})`,
              "",
            ],
          ];
        }),
      ],
    ),
  );
  out.push(
    `\nThe runs' ratios (whole runs, first call → last) are the median of each round's ${large}-tool time over its ${small}-tool time, the two run back to back.`,
  );
  const l = r.listings;
  out.push(
    `\ntools/list requests at the MCP server while the runs were measured: ${l.listings} for ${l.runs} runs of ${l.calls} calls (${l.perRun.toFixed(2)} per run).`,
  );
  return out.join("\n");
}

export function renderPayloads(r: PayloadsResult): string {
  const { oneMb } = r;
  const out = [
    `\n### Payloads: ${oneMb.calls} sequential calls answering ${oneMb.bytes / 1e6} MB each, same External Storage (${oneMb.rewind.samples.length} runs each, medians)\n`,
  ];
  out.push(
    table(
      ["", "plain Temporal", "Rewind", "Rewind / plain"],
      [
        ["per call", ms(oneMb.plain.perCallMs), ms(oneMb.rewind.perCallMs), x(oneMb.timeRatio)],
        [
          "history bytes per call",
          size(oneMb.plain.historyBytesPerCall),
          size(oneMb.rewind.historyBytesPerCall),
          x(oneMb.rewind.historyBytesPerCall / oneMb.plain.historyBytesPerCall),
        ],
        ["stored bytes per call", size(oneMb.plain.storeBytesPerCall), size(oneMb.rewind.storeBytesPerCall), ""],
      ],
    ),
  );
  out.push(`\nHistory as Rewind runs grow (echo calls in 16 lanes, one run each):\n`);
  out.push(
    table(
      [
        "calls",
        "time",
        "executions",
        "history bytes per call",
        "events per call",
        "largest input (real / in history)",
        "each execution's input, real",
      ],
      r.growth.map((g) => [
        String(g.calls),
        ms(g.ms),
        String(g.executions),
        size(g.historyBytesPerCall),
        g.eventsPerCall.toFixed(2),
        `${size(Math.max(...g.inputBytes))} / ${size(Math.max(...g.inputBytesInHistory))}`,
        g.inputBytes.map(size).join(", "),
      ]),
    ),
  );
  out.push(
    `\nHistory bytes per call at ${r.growth.at(-1)?.calls ?? "?"} calls are ${x(r.historyGrowth)} those at ${r.growth[0]?.calls ?? "?"}; the largest input carried at continue-as-new: ${size(r.largestCarriedInputBytes)}.`,
  );
  return out.join("\n");
}

export function renderTwoWorkers(r: TwoWorkersResult): string {
  const out = [`\n### Two workers' processes on the same task queues (medians, p95 in brackets)\n`];
  out.push(
    table(
      [
        "mode",
        "plain Temporal",
        "Rewind",
        "Rewind / plain",
        "per call: plain / Rewind",
        "CPU of each workers' process",
      ],
      [r.sequential, r.parallel16].map((m) => [
        m.width === 1 ? `${m.n} calls, sequential` : `${m.n} calls, 16 lanes`,
        `${ms(m.median.plain)} (${ms(m.p95.plain)})`,
        `${ms(m.median.rewind)} (${ms(m.p95.rewind)})`,
        x(m.rewindOverPlain),
        `${ms(m.perCall.plain)} / ${ms(m.perCall.rewind)}`,
        `${ms(m.workerCpuMs[0])} / ${ms(m.workerCpuMs[1])}`,
      ]),
    ),
  );
  return out.join("\n");
}
