/**
 * A toolset's credentials in a namespace, kept sealed in an entity workflow: the toolset's own
 * and each end user's. Updates write them (one scope at a time, never merged); a query reads
 * the sealed values for the dispatching activity, which alone can open them.
 *
 * Runs parked on these credentials wait here too (`awaitCredentialsSignal`): a write wakes each
 * run waiting on its scope, and a run that asks after a write newer than the one its call was
 * refused with is woken at once. Writes and waits are ordered by this one workflow, so no wake-up
 * falls between them. A history from before waits existed has none, and replays with the same
 * commands: signals to runs are only ever sent for waits.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  setHandler,
  workflowInfo,
} from "@temporalio/workflow";
import {
  ownOf,
  setOwn,
  type CredentialScope,
  type CredentialsRenewed,
  type CredentialsWait,
  type StoredCredentials,
} from "../../shared/index.ts";
import { credentialsRenewedSignal } from "../run/messages.ts";
import { awaitCredentialsSignal, getCredentialsQuery, setCredentialsUpdate } from "./toolset-credentials-messages.ts";

/** What the workflow carries into the execution it continues as: its credentials and the runs waiting. */
export type CredentialsState = StoredCredentials & { waits?: CredentialsWait[] };

type WrittenAt = NonNullable<StoredCredentials["writtenAt"]>;

/** Signals to runs sent together: well under Temporal's limit of pending signals per workflow. */
const SIGNALS_AT_ONCE = 500;

const waitKey = (wait: CredentialsWait): string => JSON.stringify([wait.runId, wait.scope, wait.endUser ?? null]);

/** Whether a write of `endUser`'s scope (the toolset's when undefined) is one `wait` waits for. */
function wakes(wait: CredentialsWait, endUser: string | undefined): boolean {
  if (endUser === undefined) return wait.scope !== "endUser";
  return wait.endUser === endUser && wait.scope !== "toolset";
}

export async function toolsetCredentials(initial: CredentialsState): Promise<void> {
  const state: StoredCredentials = {
    endUsers: { ...initial.endUsers },
    revision: initial.revision,
    ...(initial.toolset ? { toolset: initial.toolset } : {}),
    // State kept before writes were recorded by scope: each scope was written at or before `floor`.
    writtenAt: initial.writtenAt ?? { floor: initial.revision, endUsers: {} },
  };
  const writtenAt = state.writtenAt as WrittenAt;
  const waits = new Map<string, CredentialsWait>();
  for (const wait of initial.waits ?? []) waits.set(waitKey(wait), wait);

  /** The newest write a wait is woken by, if any was made: its scope and revision. */
  function newestFor(wait: CredentialsWait): { scope: CredentialScope; revision: number } {
    const toolset = { scope: "toolset" as const, revision: writtenAt.toolset ?? writtenAt.floor };
    if (wait.endUser === undefined || wait.scope === "toolset") return toolset;
    const endUser = { scope: "endUser" as const, revision: ownOf(writtenAt.endUsers, wait.endUser) ?? writtenAt.floor };
    return wait.scope === "endUser" || endUser.revision >= toolset.revision ? endUser : toolset;
  }

  /**
   * Signals each run once, `SIGNALS_AT_ONCE` at a time (Temporal fails a workflow task that would
   * leave more signals pending than its limit, 2,000 by default); answers the runs signalled (one
   * that has ended since it waited is not).
   */
  async function wake(due: CredentialsWait[], scope: CredentialScope, revision: number): Promise<string[]> {
    const byRun = new Map<string, CredentialsWait>();
    for (const wait of due) byRun.set(wait.runId, wait);
    const runs = [...byRun.values()];
    const woken: string[] = [];
    for (let at = 0; at < runs.length; at += SIGNALS_AT_ONCE) {
      await Promise.all(runs.slice(at, at + SIGNALS_AT_ONCE).map((wait) => signalRun(wait, scope, revision, woken)));
    }
    return woken.sort();
  }

  async function signalRun(
    wait: CredentialsWait,
    scope: CredentialScope,
    revision: number,
    woken: string[],
  ): Promise<void> {
    const renewed: CredentialsRenewed = {
      scope,
      revision,
      ...(wait.endUser !== undefined && scope === "endUser" ? { endUser: wait.endUser } : {}),
      ...(wait.toolsetId !== undefined ? { toolsetId: wait.toolsetId } : {}),
    };
    try {
      await getExternalWorkflowHandle(wait.runId).signal(credentialsRenewedSignal, renewed);
      woken.push(wait.runId);
    } catch {
      // The run ended: it needs no waking.
    }
  }

  setHandler(getCredentialsQuery, () => state);
  setHandler(setCredentialsUpdate, ({ endUser, sealed }) => {
    if (endUser === undefined) state.toolset = sealed;
    else setOwn(state.endUsers, endUser, sealed);
    state.revision += 1;
    const revision = state.revision;
    if (endUser === undefined) writtenAt.toolset = revision;
    else setOwn(writtenAt.endUsers, endUser, revision);
    const due = [...waits.values()].filter((wait) => wakes(wait, endUser));
    if (due.length === 0) return { revision };
    for (const wait of due) waits.delete(waitKey(wait));
    return wake(due, endUser === undefined ? "toolset" : "endUser", revision).then((woken) => ({ revision, woken }));
  });
  setHandler(awaitCredentialsSignal, async (wait) => {
    const newest = newestFor(wait);
    if (newest.revision > wait.seen) {
      await wake([wait], newest.scope, newest.revision);
      return;
    }
    const key = waitKey(wait);
    const held = waits.get(key);
    // The run waits for a write newer than the oldest revision any of its calls was refused with.
    if (!held || wait.seen < held.seen) waits.set(key, wait);
  });
  await condition(() => workflowInfo().continueAsNewSuggested && allHandlersFinished());
  await continueAsNew<typeof toolsetCredentials>({ ...state, waits: [...waits.values()] });
}
