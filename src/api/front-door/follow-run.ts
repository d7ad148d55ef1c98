/**
 * Following a run from the front door: read it until it ends, and meanwhile ask the client's
 * user whatever its parked calls wait for that they can decide (parked-questions.ts), each thing
 * once. With a deadline (`run_script`, `get_run`) it answers the run as it is once the deadline
 * passes, or at once when the run waits for someone the client can't stand in for: a run that
 * waits for a person never holds a request open for days. Without one (`tasks/result`, which MCP
 * makes block until the task ends) only the run's end or the request's signal stops it. The run
 * is read from Temporal each time, so it is followed the same from any API process. Each change
 * of what the run is doing (running, or what it waits for) is told to `progress`, once.
 */
import { setTimeout as pause } from "node:timers/promises";
import type { RunService, RunView } from "../run-service.ts";
import type { Ask, FrontDoorScope } from "./front-door-types.ts";
import { questionsFor } from "./parked-questions.ts";
import { isEnded, waitingFor } from "./run-answers.ts";
import { findRun } from "./scoped-runs.ts";

export interface FollowOptions {
  /** When to stop waiting (ms since the epoch); absent: wait for the run's end. */
  deadline?: number | undefined;
  /** Asks the client's user; absent when the client declared no elicitation. */
  ask?: Ask | undefined;
  /** Aborts the wait (the client cancelled or went away, the session ended). */
  signal: AbortSignal;
  /** Told what the run does whenever that changes (an MCP progress notification). */
  progress?: ((message: string) => void) | undefined;
}

/** What the run is doing, in a line: running, or what it waits for. */
function doing(view: RunView): string {
  if (view.status !== "parked") return `Run ${view.id} is ${view.status}.`;
  const waits = waitingFor(view);
  return waits.length > 0 ? `Run ${view.id} is parked: ${waits.join("; ")}.` : `Run ${view.id} is parked.`;
}

/** Pauses between reads: short at first (most scripts end within a second), then at most 2 s. */
const FIRST_PAUSE_MS = 100;
const LONGEST_PAUSE_MS = 2_000;

type Runs = Pick<RunService, "get" | "decide" | "answerInput" | "decideScript" | "scriptSource">;

/** The run when it ended, or as it was when following stopped; undefined when the scope has no such run. */
export async function followRun(
  runs: Runs,
  scope: FrontDoorScope,
  runId: string,
  options: FollowOptions,
): Promise<RunView | undefined> {
  let ask = options.ask;
  const asked = new Set<string>();
  let pauseMs = FIRST_PAUSE_MS;
  let told: string | undefined;
  for (;;) {
    options.signal.throwIfAborted();
    const view = await findRun(runs, scope, runId);
    if (!view || isEnded(view.status)) return view;
    if (options.progress) {
      const now = doing(view);
      if (now !== told) options.progress(now);
      told = now;
    }
    const questions = view.status === "parked" ? questionsFor(view, scope, runs) : [];
    const next = questions.find((q) => !asked.has(q.key));
    if (ask && next) {
      asked.add(next.key);
      const answer = await next
        .question()
        .then(ask)
        .catch((error: unknown) => {
          if (options.signal.aborted) throw error;
          return undefined;
        });
      // A client that did not answer (an error, its timeout) is not asked again by this follow.
      if (answer) await next.decide(answer);
      else ask = undefined;
      pauseMs = FIRST_PAUSE_MS;
      continue;
    }
    const waiting = (view.parked?.length ?? 0) + (view.scriptApproval?.state === "waiting" ? 1 : 0);
    const othersDecide = view.status === "parked" && (questions.length < waiting || next !== undefined);
    if (options.deadline !== undefined && (othersDecide || Date.now() >= options.deadline)) return view;
    const left = options.deadline === undefined ? pauseMs : Math.max(0, options.deadline - Date.now());
    await pause(Math.min(pauseMs, left), undefined, { signal: options.signal });
    pauseMs = Math.min(pauseMs * 2, LONGEST_PAUSE_MS);
  }
}
