/**
 * A run as the front door tells it: to a model, as a tool's answer (`run_script`, `get_run`,
 * `tasks/result`): a short text and the same in `structuredContent`; to an MCP client, as a task
 * (`tasks/get`, `tasks/list`). A failed run's answer is an error that names what failed and the
 * call it failed on, with that call's arguments, so the model can fix its script; a run that is
 * not done says what it waits for and to ask `get_run` later.
 */
import type { RunFailure } from "../../shared/index.ts";
import type { RunListItem } from "../run-list.ts";
import type { RunService, RunView } from "../run-service.ts";
import type { TaskStatus, TaskView, ToolAnswer } from "./front-door-types.ts";

/** How often a client should ask for a task's state, in ms. */
export const TASK_POLL_INTERVAL_MS = 2_000;

/** At most this much of a result or an argument goes into the text; structuredContent has it whole. */
const PREVIEW_CHARS = 2_000;

/** The call a failed run's script did not survive, as its error names it. */
export interface FailingCall {
  seq: number;
  tool: string;
  code?: string;
  message?: string;
  /** The arguments the script sent, when the journal could be read. */
  args?: unknown;
}

const WAITS_FOR: Record<string, string> = {
  approval: "approval",
  credentialsExpired: "renewed credentials",
  insufficientScope: "credentials with more scope",
  schemaChanged: "a decision, as its tool's schema changed",
  elicitationRequested: "an answer to its server's question",
  outcomeUnknown: "a decision on its unknown outcome",
};

export function isEnded(status: RunView["status"]): boolean {
  return status !== "running" && status !== "parked";
}

function preview(value: unknown, max = PREVIEW_CHARS): string {
  const json = JSON.stringify(value) ?? "undefined";
  return json.length <= max ? json : `${json.slice(0, max)}… (${json.length - max} more characters)`;
}

/** The call a failed run's error names (a ToolError the script did not catch), if it names one. */
export function failingCallOf(error: RunFailure | undefined): FailingCall | undefined {
  const details = error?.details;
  if (typeof details !== "object" || details === null) return undefined;
  const { seq, tool, code, message } = details as Record<string, unknown>;
  if (typeof seq !== "number" || typeof tool !== "string") return undefined;
  return {
    seq,
    tool,
    ...(typeof code === "string" ? { code } : {}),
    ...(typeof message === "string" ? { message } : {}),
  };
}

/** One line per thing the run waits for. */
export function waitingFor(view: RunView): string[] {
  const calls = (view.parked ?? []).map((call) => {
    const question = call.details?.["message"];
    const asked = call.reason === "elicitationRequested" && typeof question === "string" ? ` "${question}"` : "";
    return `call ${call.seq} ${call.tool} waits for ${WAITS_FOR[call.reason] ?? call.reason}${asked}`;
  });
  return view.scriptApproval?.state === "waiting" ? ["its script waits for approval", ...calls] : calls;
}

function failedText(view: RunView, call: FailingCall | undefined): string {
  const error = view.error;
  const lines = [`Run ${view.id} failed${error ? ` (${error.type}): ${error.message}` : "."}`];
  if (call) {
    const args = call.args === undefined ? "" : `(${preview(call.args, 500)})`;
    const why = call.code ? ` → ${call.code}${call.message ? `: ${call.message}` : ""}` : "";
    lines.push(`The failing call: ${call.seq} ${call.tool}${args}${why}`);
  }
  return lines.join("\n");
}

/** The run as a tool's answer; `call`: the failing call of a failed run, with its arguments if known. */
export function runAnswer(view: RunView, call?: FailingCall): ToolAnswer {
  const base = { runId: view.id, status: view.status };
  const later = `Call get_run({"runId":"${view.id}"}) later for its result.`;
  switch (view.status) {
    case "completed":
      return {
        text: `Run ${view.id} completed. Result: ${preview(view.result)}`,
        structured: { ...base, result: view.result ?? null },
      };
    case "failed":
      return {
        isError: true,
        text: failedText(view, call),
        structured: { ...base, error: view.error ?? null, ...(call ? { failingCall: call } : {}) },
      };
    case "rolledBack":
      return {
        isError: true,
        text: `Run ${view.id} failed and was rolled back: its completed calls were reverted.`,
        structured: { ...base, rollback: view.rollback ?? null },
      };
    case "cancelled":
      return { isError: true, text: `Run ${view.id} was cancelled.`, structured: base };
    case "parked": {
      const waits = waitingFor(view);
      return {
        text: `Run ${view.id} is parked: ${waits.join("; ") || "it waits"}. It keeps its place until a person decides; ${later}`,
        structured: { ...base, waitingFor: waits },
      };
    }
    default:
      return { text: `Run ${view.id} is still running; it goes on durably. ${later}`, structured: base };
  }
}

/** The run's answer, with a failed run's failing call and the arguments its journal entry holds (when it can be read). */
export async function answerFor(
  runs: Pick<RunService, "journal">,
  namespace: string,
  view: RunView,
): Promise<ToolAnswer> {
  const call = view.status === "failed" ? failingCallOf(view.error) : undefined;
  if (!call) return runAnswer(view);
  const page = await runs.journal(view.id, namespace, call.seq - 1, 1).catch(() => undefined);
  const entry = page?.entries.find((e) => e.seq === call.seq);
  return runAnswer(view, entry ? { ...call, args: entry.args } : call);
}

const TASK_STATUS: Record<RunView["status"], TaskStatus> = {
  running: "working",
  parked: "input_required",
  completed: "completed",
  failed: "failed",
  rolledBack: "failed",
  cancelled: "cancelled",
};

/** The run as an MCP task; `now` is when its state was read (an open run's last update is not known). */
export function taskOf(run: RunView | RunListItem, now = new Date()): TaskView {
  const message =
    "parked" in run && run.status === "parked"
      ? waitingFor(run).join("; ")
      : "error" in run && run.error
        ? run.error.message
        : undefined;
  return {
    taskId: run.id,
    status: TASK_STATUS[run.status],
    ...(message ? { statusMessage: message } : {}),
    createdAt: run.startedAt ?? now.toISOString(),
    lastUpdatedAt: run.closedAt ?? now.toISOString(),
    ttl: null,
    pollInterval: TASK_POLL_INTERVAL_MS,
  };
}
