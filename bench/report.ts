/**
 * Turns the bench's results into what it prints (and what docs/performance.md shows):
 * one markdown table per measurement, then each performance target (bench/targets.ts) with the
 * measured value, the limit, the margin and PASS, FAIL or NOT MEASURED.
 */
import type { ProcessName } from "./process-cpu.ts";
import type { LargeResultRow } from "./scenarios/large-results.ts";
import type { OverheadMode } from "./scenarios/overhead.ts";
import type { SandboxResult } from "./scenarios/sandbox-steps.ts";
import type { ScalingResult } from "./scenarios/scaling.ts";
import type { StartLatencyResult } from "./scenarios/start-latency.ts";
import type { IdleResult } from "./scenarios/idle.ts";
import type { ThroughputResult } from "./scenarios/throughput.ts";
import type { TypeCheckResult } from "./scenarios/type-check.ts";
import type { ReplayResult } from "./scenarios/workflow-replay.ts";
import { renderIdle, renderTargets, renderThroughput } from "./report-load.ts";
import { renderLargeToolset, renderPayloads, renderTwoWorkers } from "./report-scale.ts";
import type { LargeToolsetResult } from "./scenarios/large-toolset.ts";
import type { PayloadsResult } from "./scenarios/payloads.ts";
import type { ModelContextResult } from "./scenarios/model-context.ts";
import type { TwoWorkersResult } from "./scenarios/two-workers.ts";
import { renderModelContext } from "./report-model-context.ts";
import { ms } from "./stats.ts";
import type { TargetRow } from "./targets.ts";

export interface BenchResults {
  meta: Record<string, unknown>;
  typeCheck?: TypeCheckResult;
  sandbox?: SandboxResult;
  start?: StartLatencyResult;
  overhead?: OverheadMode[];
  replay?: ReplayResult;
  scaling?: ScalingResult;
  throughput?: ThroughputResult;
  idle?: IdleResult;
  largeResults?: LargeResultRow[];
  largeToolset?: LargeToolsetResult;
  payloads?: PayloadsResult;
  twoWorkers?: TwoWorkersResult;
  modelContext?: ModelContextResult;
  targets?: TargetRow[];
}

export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(headers), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.map(line)].join("\n");
}

const x = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(2)}×` : "–");
const num = (value: number, digits = 1): string => (Number.isFinite(value) ? value.toFixed(digits) : "–");
const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;
/** Bytes in B, KB or MB (1024-based), about 3 significant digits. */
const size = (bytes: number): string => {
  if (!Number.isFinite(bytes)) return "–";
  if (bytes < 1024) return `${bytes.toFixed(0)} B`;
  const [value, unit] = bytes < 1024 ** 2 ? [bytes / 1024, "KB"] : [bytes / 1024 ** 2, "MB"];
  return `${value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)} ${unit}`;
};
/** A result size as the scenario names it (decimal: 1 KB is 1,000 bytes). */
const resultSize = (bytes: number): string =>
  bytes >= 1e6 ? `${bytes / 1e6} MB` : bytes >= 1e3 ? `${bytes / 1e3} KB` : `${bytes} B`;

export function renderReport(results: BenchResults): string {
  const out: string[] = [];
  const meta = results.meta;
  out.push(
    `Rewind bench — ${String(meta["date"])} — ${String(meta["mode"])} — commit ${String(meta["commit"])} — Node ${String(meta["node"])}, ${String(meta["cpus"])}, ${String(meta["memory"])}, load average ${JSON.stringify(meta["loadAverageAtStart"])} at start — Temporal: ${String(meta["temporal"] ?? "dev server")}`,
  );

  if (results.overhead) {
    const first = results.overhead[0];
    const roundsOf = results.overhead
      .map((m) => `${m.samples.rewind.length} ${m.mode === "sequential" ? "sequential" : "16-lane"}`)
      .join(", ");
    out.push(`\n### Overhead: ${first?.n ?? "?"} echo calls, median of ${roundsOf} rounds (p95 in brackets)\n`);
    out.push(
      table(
        [
          "mode",
          "direct MCP",
          "Temporal, no-op activities",
          "plain Temporal",
          "Rewind",
          "Rewind / plain",
          "Rewind − plain per call",
          "Rewind / direct",
          "per call: direct / no-op / plain / Rewind",
        ],
        results.overhead.map((m) => [
          m.mode === "sequential" ? "sequential" : "16 in parallel",
          `${ms(m.median.direct)} (${ms(m.p95.direct)})`,
          `${ms(m.median.floor)} (${ms(m.p95.floor)})`,
          `${ms(m.median.plain)} (${ms(m.p95.plain)})`,
          `${ms(m.median.rewind)} (${ms(m.p95.rewind)})`,
          x(m.rewindOverPlain),
          ms(m.perCall.rewind - m.perCall.plain),
          x(m.rewindOverDirect),
          `${ms(m.perCall.direct)} / ${ms(m.perCall.floor)} / ${ms(m.perCall.plain)} / ${ms(m.perCall.rewind)}`,
        ]),
      ),
    );
    const modes = results.overhead;
    const columns = modes.flatMap((m) => [
      {
        label: `no-op, ${m.mode === "sequential" ? "sequential" : "16∥"}`,
        mode: m,
        history: m.history.floor,
        wall: m.median.floor,
        cpu: m.cpuPerCall.floor,
      },
      {
        label: `plain, ${m.mode === "sequential" ? "sequential" : "16∥"}`,
        mode: m,
        history: m.history.plain,
        wall: m.median.plain,
        cpu: m.cpuPerCall.plain,
      },
      {
        label: `Rewind, ${m.mode === "sequential" ? "sequential" : "16∥"}`,
        mode: m,
        history: m.history.rewind,
        wall: m.median.rewind,
        cpu: m.cpuPerCall.rewind,
      },
    ]);
    const cpu = (name: ProcessName) => columns.map((c) => ms(c.cpu[name] ?? Number.NaN));
    const phase = (name: keyof OverheadMode["history"]["plain"]["phases"]) =>
      columns.map((c) => ms(c.history.phases[name] / c.mode.n));
    out.push(
      `\nWhere a call's time goes (Temporal's event timestamps, summed per call, median over the measured runs; in parallel the phases overlap):\n`,
    );
    out.push(
      table(
        ["", ...columns.map((c) => c.label)],
        [
          ["activity task: scheduled → started", ...phase("activityScheduleToStart")],
          ["activity: started → completed (the MCP call)", ...phase("activityStartToClose")],
          ["workflow task: scheduled → started", ...phase("workflowTaskScheduleToStart")],
          ["workflow task: started → completed (Rewind: + sandbox step)", ...phase("workflowTaskStartToClose")],
          ["workflow tasks per call", ...columns.map((c) => num(c.history.workflowTasks / c.mode.n, 2))],
          [
            "time per workflow task (started → completed)",
            ...columns.map((c) => ms(c.history.phases.workflowTaskStartToClose / c.history.workflowTasks)),
          ],
          ["wall time per call (caller's clock)", ...columns.map((c) => ms(c.wall / c.mode.n))],
          ["once per run: started → first call scheduled", ...columns.map((c) => ms(c.history.headMs))],
          ["once per run: last call completed → run closed", ...columns.map((c) => ms(c.history.tailMs))],
          ["history events per call", ...columns.map((c) => num(c.history.events / c.mode.n, 2))],
          ["payload bytes per call", ...columns.map((c) => num(c.history.payloadBytes / c.mode.n, 0))],
          [
            `CPU per call: Temporal ${meta["temporal"] === undefined || meta["temporal"] === "dev server" ? "dev server" : "services"}`,
            ...cpu("temporal"),
          ],
          ["CPU per call: workers' process", ...cpu("workers")],
          ["CPU per call: bench + API process", ...cpu("bench")],
          ["CPU per call: MCP server", ...cpu("mcp")],
        ],
      ),
    );
    out.push(
      `\nPOST /v1/runs itself (type-check, start), median: ${modes.map((m) => `${m.mode} ${ms(m.rewindPostMs)}`).join(", ")}.`,
    );
  }

  if (results.replay) {
    const r = results.replay;
    out.push(
      `\n### Workflow code per call (histories of ${r.sizes[0]}- and ${r.sizes[1]}-call sequential runs replayed with Worker.runReplayHistory, no server)\n`,
    );
    out.push(
      table(
        ["", "plain Temporal", "Rewind"],
        [
          ["replay CPU per call (marginal)", ms(r.plain.msPerCall), ms(r.rewind.msPerCall)],
          [
            "entries into the workflow's V8 context per call",
            num(r.plain.vmEntriesPerCall, 2),
            num(r.rewind.vmEntriesPerCall, 2),
          ],
        ],
      ),
    );
    out.push(
      `\nOne entry (vm runInContext) costs ${num(r.vmEntryUs.withTimeout, 0)} µs on this machine with the timeout the SDK always sets (isolateExecutionTimeout), ${num(r.vmEntryUs.withoutTimeout, 1)} µs without.`,
    );
  }

  if (results.scaling) {
    const s = results.scaling;
    out.push(`\n### Scaling: Rewind runs of sequential calls\n`);
    out.push(
      table(
        [
          "calls",
          "rounds",
          "median total",
          "per call",
          "executions",
          "events per call",
          "events per execution (max)",
          "payload bytes per call",
          "largest execution input",
          "workflow task per call",
        ],
        s.rows.map((r) => [
          String(r.n),
          String(r.samples.length),
          ms(r.medianMs),
          ms(r.perCallMs),
          String(r.history.executions),
          num(r.history.events / r.n, 2),
          String(Math.max(...r.history.eventsPerExecution)),
          num(r.history.payloadBytes / r.n, 0),
          kb(Math.max(...r.history.startInputBytes)),
          ms(r.history.phases.workflowTaskStartToClose / r.n),
        ]),
      ),
    );
    out.push(
      `\nSlope of total time over calls: ${ms(s.slopeMsPerCall)} per call (intercept ${ms(s.interceptMs)}); per-call time at ${s.rows.at(-1)?.n ?? "?"} calls is ${x(s.growth)} that at 100.`,
    );
  }

  if (results.sandbox) {
    const w = results.sandbox.warm;
    out.push(`\n### Sandbox time per step (createSandbox, no Temporal)\n`);
    out.push(
      table(
        ["step", "median", "p95", "per completion"],
        [
          [`warm: one new completion (${w.steps} steps)`, ms(w.medianMs), ms(w.p95Ms), "–"],
          ["warm: steps 1–100 / last 100", `${ms(w.first100MedianMs)} / ${ms(w.last100MedianMs)}`, "", ""],
          ...results.sandbox.cold.map((c) => [
            `cold: fresh isolate replaying ${c.n} completions`,
            ms(c.medianMs),
            "",
            `${num(c.perCompletionUs, 1)} µs`,
          ]),
          ...(results.sandbox.firstStep
            ? [
                [
                  `first step of a new run (median of ${results.sandbox.firstStep.rounds})`,
                  ms(results.sandbox.firstStep.medianMs),
                  "",
                  "",
                ],
              ]
            : []),
        ],
      ),
    );
    const e = results.sandbox.isolateEntryUs;
    out.push(
      `\nOne entry into an isolate with one host callback (what feeding a completion that issues the next call costs at least): ${num(e.apply, 0)} µs with isolated-vm's \`apply\` (a warm step's: the isolate runs on another thread), ${num(e.applySync, 1)} µs with \`applySync\` (a cold replay's, in slices that let the event loop run).`,
    );
  }

  if (results.typeCheck) {
    const t = results.typeCheck;
    out.push(
      `\n### Type-check: typical script, toolset of ${t.tools} tools (.d.ts ${kb(t.dtsBytes)}, rendered in ${ms(t.renderMs)})\n`,
    );
    out.push(
      table(
        ["checker", "median", "p95", "samples"],
        [
          ["first check in the process", ms(t.firstInProcessMs), "", "1"],
          ["cold: first check of a new checker", ms(t.cold.medianMs), "", String(t.cold.samples.length)],
          [
            "warm: later checks, a new script each time",
            ms(t.warm.medianMs),
            ms(t.warm.p95Ms),
            String(t.warm.samples.length),
          ],
        ],
      ),
    );
  }

  if (results.start) {
    const st = results.start;
    out.push(`\n### Start latency (warm, one run at a time, ${st.samples.length} samples)\n`);
    out.push(
      table(
        ["", "median", "p95"],
        [
          ["POST /v1/runs → first tools/call at the MCP server", ms(st.medianMs), ms(st.p95Ms)],
          ["POST /v1/runs answered", ms(st.post.medianMs), ms(st.post.p95Ms)],
          ["  POST sent → WorkflowExecutionStarted (API: type-check, start)", ms(st.phases.apiToStarted), ""],
          ["  → first workflow task completed (cold sandbox step)", ms(st.phases.firstWorkflowTask), ""],
          ["  activity task scheduled → started", ms(st.phases.activityDispatch), ""],
          ["  activity started → request at the MCP server", ms(st.phases.activityToServer), ""],
          [
            "plain Temporal: client start → its call at the MCP server (session already open)",
            ms(st.plainToServer.medianMs),
            ms(st.plainToServer.p95Ms),
          ],
          [
            `API beside the worker (npm start), eager start (${st.eager.started.rewind} of ${st.eager.started.of} eager): POST /v1/runs → first tools/call`,
            ms(st.eager.medianMs),
            ms(st.eager.p95Ms),
          ],
          ["  POST /v1/runs answered", ms(st.eager.post.medianMs), ""],
          [
            "  run started → first activity scheduled: Rewind (first step carried) / plain",
            `${ms(st.eager.headMs.rewind)} / ${ms(st.eager.headMs.plain)}`,
            "",
          ],
          [
            `plain Temporal, eager start (${st.eager.started.plain} of ${st.eager.started.of} eager): client start → its call`,
            ms(st.eager.plainToServer.medianMs),
            ms(st.eager.plainToServer.p95Ms),
          ],
        ],
      ),
    );
  }

  if (results.throughput) out.push(renderThroughput(results.throughput, meta["workersIdleRssMb"]));
  if (results.idle) out.push(renderIdle(results.idle));
  if (results.modelContext) out.push(renderModelContext(results.modelContext, table));

  if (results.largeResults) {
    const rows = results.largeResults;
    out.push(
      `\n### Large results: sequential calls of an MCP tool answering text of each size, plain Temporal and Rewind with the same External Storage (file store, ${rows[0]?.rewind.samples.length ?? "?"} runs each, medians)\n`,
    );
    out.push(
      table(
        [
          "result",
          "calls per run",
          "time per call: direct MCP / plain / Rewind",
          "Rewind / plain",
          "history per call: plain / Rewind",
          "Rewind / plain",
          "history payloads per call: plain / Rewind",
          "stored per call: plain / Rewind",
          "largest event: plain / Rewind",
          "workers' CPU per call: plain / Rewind",
        ],
        rows.map((r) => [
          resultSize(r.bytes),
          String(r.calls),
          `${ms(r.direct.perCallMs)} / ${ms(r.plain.perCallMs)} / ${ms(r.rewind.perCallMs)}`,
          x(r.timeRatio),
          `${size(r.plain.historyBytesPerCall)} / ${size(r.rewind.historyBytesPerCall)}`,
          x(r.historyRatio),
          `${size(r.plain.payloadBytesPerCall)} / ${size(r.rewind.payloadBytesPerCall)}`,
          `${size(r.plain.storeBytesPerCall)} / ${size(r.rewind.storeBytesPerCall)}`,
          `${size(r.plain.largestEventBytes)} / ${size(r.rewind.largestEventBytes)}`,
          `${ms(r.plain.cpuPerCall.workers ?? Number.NaN)} / ${ms(r.rewind.cpuPerCall.workers ?? Number.NaN)}`,
        ]),
      ),
    );
    out.push(
      `\nHistory: every execution's events as fetched, protobuf-encoded, over calls (the run's start and end included). Stored: bytes the run added to its file store. Time per call: a run's start to its result, over calls; direct MCP: the same calls made with the MCP client pool, no Temporal.`,
    );
    const continued = rows.filter((r) => r.rewind.executions > 1 || r.plain.executions > 1);
    if (continued.length > 0)
      out.push(
        `Runs that continued as new (their executions' histories summed): ${continued.map((r) => `${resultSize(r.bytes)}: Rewind ${r.rewind.executions}, plain ${r.plain.executions} executions`).join("; ")}.`,
      );
  }

  if (results.twoWorkers) out.push(renderTwoWorkers(results.twoWorkers));
  if (results.largeToolset) out.push(renderLargeToolset(results.largeToolset));
  if (results.payloads) out.push(renderPayloads(results.payloads));
  if (results.targets) out.push(renderTargets(results.targets, meta["mode"]));
  return out.join("\n");
}
