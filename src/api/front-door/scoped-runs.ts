/**
 * The runs a front-door session sees: those of its namespace and toolset and, when it names an
 * end user, that end user's. `get_run`, `tasks/get`, `tasks/result`, `tasks/cancel` and
 * `tasks/list` all ask here, so a run is visible to all of them or to none; any other run looks
 * exactly like a missing one, as the API's own routes answer another namespace's run.
 */
import { HttpError } from "../http-error.ts";
import type { RunListFilters } from "../run-list.ts";
import { RUN_ID_PATTERN, type RunService, type RunView } from "../run-service.ts";
import type { FrontDoorScope } from "./front-door-types.ts";

/** Whether a run (as a view or a list item shows it) belongs to the session's scope. */
export function inScope(run: { toolset?: string | undefined; endUser?: string | undefined }, scope: FrontDoorScope) {
  return run.toolset === scope.toolset.id && (scope.endUser === undefined || run.endUser === scope.endUser);
}

/** The filters of the run list that give the scope's runs. */
export function scopeFilters(scope: FrontDoorScope): RunListFilters {
  return { toolset: scope.toolset.id, ...(scope.endUser === undefined ? {} : { endUser: scope.endUser }) };
}

/** The run, or undefined when it does not exist or is not the scope's. */
export async function findRun(
  runs: Pick<RunService, "get">,
  scope: FrontDoorScope,
  runId: string,
): Promise<RunView | undefined> {
  if (!RUN_ID_PATTERN.test(runId)) return undefined;
  try {
    const view = await runs.get(runId, scope.namespace);
    return inScope(view, scope) ? view : undefined;
  } catch (error) {
    if (error instanceof HttpError && error.status === 404) return undefined;
    throw error;
  }
}
