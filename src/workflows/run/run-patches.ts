/**
 * Which of the run workflow's changes (`PATCHES`) a run follows, asked through `isPatched`.
 *
 * A new run asks for every patch before its first command (`announcePatches`), so all its markers
 * are recorded at the head of its first workflow task and each later check finds its answer
 * already given. Why: a marker recorded right after a local activity's result could land in the
 * workflow task after the one that holds the activity's marker (the activity finished while its
 * task was being completed, under load). A replay resolves the activity in the earlier task, where
 * the patch is not yet announced, so `patched()` answered false there, and the marker in the next
 * task matched no command: a nondeterminism error on every replay of that run. Runs recorded
 * before `patchesAnnouncedFirst` have no such head: for them every patch is asked for where it
 * always was.
 *
 * Since `releaseBaseline`, a new run records one marker for every change declared before the
 * baseline instead of one each: Temporal's core follows each patch marker with an upsert of the
 * `TemporalChangeVersion` search attribute, so thirteen patches cost a run 26 events and 13
 * visibility writes before its first call. A run that has the baseline's marker follows every
 * change declared before it; patches declared after it are announced one by one, as before.
 * A run from before the baseline asks for each patch as it always did.
 *
 * The answer for the baseline is kept on `globalThis`, which Temporal's workflow sandbox keeps
 * apart for each workflow execution, because it must be asked once, in the first activation,
 * and read by code that runs in handlers as well as in the run's main path.
 */
import { patched } from "@temporalio/workflow";
import { PATCHES } from "./patches.ts";

type PatchId = (typeof PATCHES)[keyof typeof PATCHES];

const ALL: readonly PatchId[] = Object.values(PATCHES);
const BASELINE_INDEX = ALL.indexOf(PATCHES.releaseBaseline);
/** Changes a run with the baseline's marker follows without a marker of their own. */
const COVERED: ReadonlySet<PatchId> = new Set(ALL.slice(0, BASELINE_INDEX));
/** Changes declared after the baseline: announced one by one. */
const AFTER_BASELINE: readonly PatchId[] = ALL.slice(BASELINE_INDEX + 1);

const BASELINE_KEY = Symbol.for("rewind.releaseBaseline");
type BaselineHolder = { [BASELINE_KEY]?: boolean };

function hasBaseline(): boolean {
  return (globalThis as BaselineHolder)[BASELINE_KEY] === true;
}

/** The run's first call, before any command: records the markers of the patches it follows. */
export function announcePatches(): void {
  const baseline = patched(PATCHES.releaseBaseline);
  (globalThis as BaselineHolder)[BASELINE_KEY] = baseline;
  if (baseline) {
    for (const id of AFTER_BASELINE) patched(id);
    return;
  }
  if (!patched(PATCHES.patchesAnnouncedFirst)) return;
  // In declaration order, which is append-only: a replay sends the same markers in the same order.
  for (const id of ALL) if (id !== PATCHES.releaseBaseline) patched(id);
}

/** Whether the run follows the change `id`: what `patched(id)` answers, without a marker for a change the baseline covers. */
export function isPatched(id: PatchId): boolean {
  return (hasBaseline() && COVERED.has(id)) || patched(id);
}
