/**
 * `rewind runs list|show|journal|watch|cancel|rollback|approve|reject|answer|save`: reading and steering
 * runs that already exist, and keeping a run's script as a workflow. Each is one or two API
 * calls; the human output is short and names the next command to type (approve a parked call,
 * answer a call's question, watch a running one, pin a saved script).
 */
import type { CallDecisionBody, JournalBody, JournalEntryBody, RunViewBody } from "../../contract/index.ts";
import { arg, parseCommand, seqArg, UsageError } from "../args.ts";
import { compact, formatDuration, full, printJson, printLine, progressText, table } from "../output.ts";
import { watchRun } from "../watch.ts";
import { answer } from "./answer.ts";
import { fail, resolve, retry } from "./outcome-decisions.ts";
import { approveScript, rejectScript } from "./script-decisions.ts";
import type { Command, CommandHint } from "./command.ts";
import { saveCassette } from "./replay.ts";
import { readText, reportTypeErrors } from "./script-file.ts";

function describeRun(run: RunViewBody, hint: CommandHint): string {
  const lines = [`${run.id}  ${run.status}`];
  if (run.toolset) lines.push(`  toolset   ${run.toolset}`);
  if (run.endUser) lines.push(`  end user  ${run.endUser}`);
  if (run.startedAt) lines.push(`  started   ${run.startedAt}`);
  if (run.closedAt && run.startedAt)
    lines.push(`  closed    ${run.closedAt} (${formatDuration(Date.parse(run.closedAt) - Date.parse(run.startedAt))})`);
  if (run.status === "completed") lines.push(`  result    ${full(run.result).replace(/\n/g, "\n  ")}`);
  if (run.error) lines.push(`  error     ${run.error.type}: ${run.error.message}`);
  if (run.scriptApproval?.state === "waiting")
    lines.push(
      `  waits     for its script's approval, before its first step`,
      `            approve: ${hint(`runs approve-script ${run.id}`)} | reject: ${hint(`runs reject-script ${run.id}`)}`,
    );
  if (run.rollback) lines.push(...rollbackLines(run.rollback));
  for (const p of run.parked ?? []) {
    lines.push(`  parked    call ${p.seq} ${p.tool}(${compact(p.args, 80)}) waits for ${p.reason}`);
    if (p.reason === "elicitationRequested") {
      lines.push(
        `            asks: ${String(p.details?.["message"] ?? "")}`,
        `            schema: ${compact(p.details?.["requestedSchema"], 120)}`,
      );
      lines.push(`            answer: ${hint(`runs answer ${run.id} ${p.seq} --accept '{…}' | --decline | --cancel`)}`);
    } else if (p.reason === "outcomeUnknown") {
      lines.push(
        `            decide: ${hint(`runs resolve ${run.id} ${p.seq} --result '{…}' | retry ${run.id} ${p.seq} | fail ${run.id} ${p.seq}`)}`,
      );
    } else {
      lines.push(`            approve: ${hint(`runs approve ${run.id} ${p.seq}`)}`);
    }
  }
  if (run.temporalUrl) lines.push(`  temporal  ${run.temporalUrl}`);
  return lines.join("\n");
}

function journalRow(e: JournalEntryBody): string[] {
  const took = e.completedAt !== undefined ? formatDuration(e.completedAt - (e.startedAt ?? e.issuedAt)) : "";
  const outcome =
    e.status === "completed"
      ? `→ ${compact(e.result, 60)}`
      : e.error
        ? `${e.error.code}: ${e.error.message}`
        : e.progress
          ? `at ${progressText(e.progress)}`
          : "";
  return [
    String(e.seq),
    e.tool,
    e.status + (e.approved ? " (approved)" : "") + (e.revertOf ? ` (reverts ${e.revertOf})` : ""),
    String(e.attempts),
    took,
    `${compact(e.args, 40)} ${outcome}`,
  ];
}

/** What a rollback reverted and what it could not, one line each. */
function rollbackLines(rollback: NonNullable<RunViewBody["rollback"]>): string[] {
  const { trigger } = rollback;
  const why =
    trigger.kind === "requested"
      ? `asked${trigger.by ? ` for ${trigger.by}` : ""}${trigger.reason ? `: ${trigger.reason}` : ""}`
      : `the script failed: ${trigger.error.type}: ${trigger.error.message}`;
  return [
    `  rollback  ${rollback.state === "rollingBack" ? "in progress" : "done"} (${why})`,
    ...rollback.reverted.map((r) => `  reverted  call ${r.seq} ${r.tool} by call ${r.revertSeq} ${r.revertTool}`),
    ...rollback.notReverted.map((n) => `  NOT reverted  call ${n.seq} ${n.tool}: ${n.reason}`),
  ];
}

const rollback: Command = async (argv, { api, hint }) => {
  const cmd = parseCommand(argv, {
    usage: "rewind runs rollback <id> [--reason text] [--by name] [--json]",
    positionals: ["id"],
    strings: ["reason", "by"],
  });
  const reason = cmd.string("reason");
  const by = cmd.string("by");
  const run = await api.rollbackRun(arg(cmd, 0), { ...(reason ? { reason } : {}), ...(by ? { by } : {}) });
  if (cmd.json) printJson(run);
  else
    printLine(`rollback requested: the script stops and its completed calls are reverted\n${describeRun(run, hint)}`);
  return 0;
};

const SIGNAL_USAGE = "rewind runs signal <id> <name> [--payload json|@file] [--json]";

/** `rewind runs signal`: what a script's `waitForSignal(name)` waits for, sent by the harness. */
const signal: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, { usage: SIGNAL_USAGE, positionals: ["id", "name"], strings: ["payload"] });
  const option = cmd.string("payload");
  let payload: unknown = null;
  if (option !== undefined) {
    const text = option.startsWith("@") ? await readText(option.slice(1), "payload") : option;
    try {
      payload = JSON.parse(text) as unknown;
    } catch (error) {
      throw new UsageError(
        `--payload must be JSON: ${error instanceof Error ? error.message : String(error)}\nusage: ${SIGNAL_USAGE}`,
      );
    }
  }
  const answer = await api.signalRun(arg(cmd, 0), arg(cmd, 1), payload);
  if (cmd.json) printJson(answer);
  else printLine(`signal ${JSON.stringify(arg(cmd, 1))} sent to ${arg(cmd, 0)}`);
  return 0;
};

/** What cancelling did, as the run's status after it says. */
function cancelOutcome(status: string): string {
  if (status === "running" || status === "parked") return "cancel requested: the run stops at its next step\n";
  if (status === "cancelled") return "the run is cancelled\n";
  return `the run had already ended (${status}): nothing to cancel\n`;
}

const oneRun =
  (name: string, usage: string): Command =>
  async (argv, { api, hint }) => {
    const cmd = parseCommand(argv, { usage, positionals: ["id"] });
    const run = name === "cancel" ? await api.cancelRun(arg(cmd, 0)) : await api.getRun(arg(cmd, 0));
    if (cmd.json) printJson(run);
    else printLine(`${name === "cancel" ? cancelOutcome(run.status) : ""}${describeRun(run, hint)}`);
    return 0;
  };

const LIST_USAGE =
  "rewind runs list [--status running|parked|completed|failed|cancelled|rolledBack] [--toolset id] [--end-user name] " +
  "[--started-after iso] [--started-before iso] [--page-size n] [--page-token token] [--json]";
const LIST_FILTERS = {
  status: "status",
  toolset: "toolset",
  "end-user": "endUser",
  "started-after": "startedAfter",
  "started-before": "startedBefore",
} as const;
const STATES = new Set(["running", "parked", "completed", "failed", "cancelled", "rolledBack"]);

const list: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, {
    usage: LIST_USAGE,
    strings: ["page-size", "page-token", ...Object.keys(LIST_FILTERS)],
  });
  const size = cmd.string("page-size");
  const pageToken = cmd.string("page-token");
  if (size !== undefined && !/^\d+$/.test(size)) throw new UsageError(`--page-size must be a number, got "${size}"`);
  const status = cmd.string("status");
  if (status !== undefined && !STATES.has(status))
    throw new UsageError(`--status must be one of ${[...STATES].join(", ")}, got "${status}"`);
  // Everything else is the API's to validate (a 400 names the field).
  const filters: Record<string, string> = {};
  const again: string[] = [];
  for (const [flag, field] of Object.entries(LIST_FILTERS)) {
    const value = cmd.string(flag);
    if (value === undefined) continue;
    filters[field] = value;
    again.push(`--${flag} ${JSON.stringify(value)}`);
  }
  const page = await api.listRuns({
    ...filters,
    ...(size ? { pageSize: Number(size) } : {}),
    ...(pageToken ? { pageToken } : {}),
  });
  if (cmd.json) {
    printJson(page);
    return 0;
  }
  if (page.runs.length === 0) printLine("no runs");
  else
    printLine(
      table([
        ["RUN", "STATUS", "STARTED", "END USER"],
        ...page.runs.map((r) => [r.id, r.status, r.startedAt ?? "", r.endUser ?? ""]),
      ]),
    );
  if (page.nextPageToken)
    printLine(`more: rewind runs list ${[...again, `--page-token ${page.nextPageToken}`].join(" ")}`);
  return 0;
};

const journal: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, { usage: "rewind runs journal <id> [--json]", positionals: ["id"] });
  const id = arg(cmd, 0);
  const all: JournalBody = { entries: [], completionOrder: [] };
  for (let afterSeq: number | undefined = 0; afterSeq !== undefined;) {
    const page: JournalBody = await api.getJournal(id, { afterSeq, limit: 1000 });
    all.entries.push(...page.entries);
    all.completionOrder = page.completionOrder;
    afterSeq = page.nextAfterSeq;
  }
  if (cmd.json) printJson(all);
  else if (all.entries.length === 0) printLine(`${id} has made no calls`);
  else
    printLine(table([["SEQ", "TOOL", "STATUS", "ATTEMPTS", "TOOK", "ARGS → RESULT"], ...all.entries.map(journalRow)]));
  return 0;
};

const watch: Command = async (argv, { api, hint }) => {
  const cmd = parseCommand(argv, { usage: "rewind runs watch <id> [--json]", positionals: ["id"] });
  const run = await api.getRun(arg(cmd, 0));
  if (!cmd.json) printLine(`watching ${run.id}${run.toolset ? ` · toolset ${run.toolset}` : ""}`);
  return watchRun(api, run.id, { json: cmd.json, initial: run, hint });
};

/** `as acme/key-1a2b3c4d for alice`: who the journal says decided. */
const decidedByText = (answer: CallDecisionBody): string =>
  answer.decidedBy
    ? ` as ${answer.decidedBy.principal}${answer.decidedBy.by ? ` for ${answer.decidedBy.by}` : ""}`
    : "";

const decide =
  (approve: boolean): Command =>
  async (argv, { api }) => {
    const usage = approve
      ? "rewind runs approve <id> <seq> [--by name] [--json]"
      : "rewind runs reject <id> <seq> [--reason text] [--by name] [--json]";
    const cmd = parseCommand(argv, { usage, positionals: ["id", "seq"], strings: approve ? ["by"] : ["reason", "by"] });
    const id = arg(cmd, 0);
    const seq = seqArg(arg(cmd, 1));
    const by = cmd.string("by");
    const answer = approve
      ? await api.approveCall(id, seq, by)
      : await api.rejectCall(id, seq, cmd.string("reason"), by);
    if (cmd.json) printJson(answer);
    else printLine(`${approve ? "approved" : "rejected"} call ${seq} of ${id}${decidedByText(answer)}`);
    return 0;
  };

const resume: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, {
    usage: "rewind runs resume <id> <seq> [--by name] [--json]",
    positionals: ["id", "seq"],
    strings: ["by"],
  });
  const id = arg(cmd, 0);
  const seq = seqArg(arg(cmd, 1));
  const answer = await api.resumeCall(id, seq, cmd.string("by"));
  if (cmd.json) printJson(answer);
  else printLine(`call ${seq} of ${id} is sent again, with the same idempotency key`);
  return 0;
};

const fork: Command = async (argv, { api, hint }) => {
  const cmd = parseCommand(argv, {
    usage: "rewind runs fork <id> <script.ts> [--input json|@file] [--cancel-parent] [--watch] [--json]",
    positionals: ["id", "script"],
    strings: ["input"],
    booleans: ["cancel-parent", "watch"],
  });
  const file = arg(cmd, 1);
  const script = await readText(file, "script");
  const inputOption = cmd.string("input");
  const input =
    inputOption === undefined
      ? undefined
      : (JSON.parse(
          inputOption.startsWith("@") ? await readText(inputOption.slice(1), "input") : inputOption,
        ) as unknown);
  let run;
  try {
    run = await api.forkRun(arg(cmd, 0), {
      script,
      ...(input !== undefined ? { input } : {}),
      parent: cmd.flag("cancel-parent") ? "cancel" : "keep",
    });
  } catch (error) {
    if (reportTypeErrors(error, script, file, cmd.json)) return 1;
    throw error;
  }
  if (cmd.flag("watch")) return watchRun(api, run.id, { json: cmd.json, initial: run, hint });
  if (cmd.json) printJson(run);
  else
    printLine(
      `${run.id} forked from ${run.forkedFrom}: reuses its calls until the script first differs\n  watch: rewind runs watch ${run.id}`,
    );
  return 0;
};

const save: Command = async (argv, { api }) => {
  const cmd = parseCommand(argv, {
    usage: "rewind runs save <id> <name> [--description text] [--toolset id] [--json]",
    positionals: ["id", "name"],
    strings: ["description", "toolset"],
  });
  const description = cmd.string("description");
  const toolset = cmd.string("toolset");
  const saved = await api.saveRun(arg(cmd, 0), {
    name: arg(cmd, 1),
    ...(description ? { description } : {}),
    ...(toolset ? { toolset } : {}),
  });
  if (cmd.json) printJson(saved);
  else
    printLine(
      `saved the script of ${arg(cmd, 0)} as ${saved.id}, workflows.${saved.name} (toolset ${saved.toolset})\npin it in a toolset: workflows: { ${saved.name}: ${saved.id} }`,
    );
  return 0;
};

export const RUNS_COMMANDS: Record<string, Command> = {
  resume,
  save,
  fork,
  cassette: saveCassette,
  list,
  show: oneRun("show", "rewind runs show <id> [--json]"),
  journal,
  watch,
  cancel: oneRun("cancel", "rewind runs cancel <id> [--json]"),
  signal,
  rollback,
  approve: decide(true),
  reject: decide(false),
  answer,
  resolve,
  retry,
  fail,
  "approve-script": approveScript,
  "reject-script": rejectScript,
};
