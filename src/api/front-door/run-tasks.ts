/**
 * MCP tasks, kept by Temporal: a task is a run, its id the run's id, its state the run's. Nothing
 * is stored in the API process, so a task outlives the process that made it and any API process
 * answers for it, on any session of the same scope. `tasks/result` follows the run to its end
 * (asking the client's user what they can decide) and answers what `run_script` would have;
 * `tasks/cancel` is the run's cancellation; `tasks/list` is the run list of the scope.
 */
import { setTimeout as pause } from "node:timers/promises";
import { HttpError } from "../http-error.ts";
import type { RunService } from "../run-service.ts";
import { followRun } from "./follow-run.ts";
import { ProtocolRefusal, type FrontDoorScope, type TaskHandlers } from "./front-door-types.ts";
import { answerFor, isEnded, taskOf } from "./run-answers.ts";
import { findRun, scopeFilters } from "./scoped-runs.ts";

/** Tasks per page of `tasks/list`. */
const LIST_PAGE = 50;
/** How long `tasks/cancel` waits for the run to end after asking it to, before it answers. */
const CANCEL_WAIT_MS = 10_000;
const CANCEL_POLL_MS = 200;

type Runs = Pick<
  RunService,
  "get" | "list" | "cancel" | "journal" | "decide" | "answerInput" | "decideScript" | "scriptSource"
>;

export function createRunTasks(runs: Runs, scope: FrontDoorScope): TaskHandlers {
  return {
    async get(taskId) {
      const view = await findRun(runs, scope, taskId);
      return view && taskOf(view);
    },

    async result(taskId, context) {
      const view = await followRun(runs, scope, taskId, {
        ask: context.ask,
        signal: context.signal,
        progress: context.progress,
      });
      return view && answerFor(runs, scope.namespace, view);
    },

    async list(cursor) {
      const page = await runs
        .list(scope.namespace, { pageSize: LIST_PAGE, pageToken: cursor }, scopeFilters(scope))
        .catch((error: unknown) => {
          // The run list refuses a page token it never gave (400).
          if (error instanceof HttpError && error.status === 400)
            throw new ProtocolRefusal("invalidParams", "cursor is not a nextCursor tasks/list answered");
          throw error;
        });
      const now = new Date();
      return {
        tasks: page.runs.map((run) => taskOf(run, now)),
        ...(page.nextPageToken ? { nextCursor: page.nextPageToken } : {}),
      };
    },

    async cancel(taskId) {
      const view = await findRun(runs, scope, taskId);
      if (!view || isEnded(view.status)) return;
      await runs.cancel(taskId, scope.namespace);
      // The run ends once its workflow has handled the cancellation, usually within a second;
      // MCP wants the task cancelled before the answer.
      const until = Date.now() + CANCEL_WAIT_MS;
      for (;;) {
        const now = await findRun(runs, scope, taskId);
        if (!now || isEnded(now.status) || Date.now() >= until) return;
        await pause(CANCEL_POLL_MS);
      }
    },
  };
}
