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
 * A run from before the baseline asks for each patch as it always did. A later baseline
 * (`releaseBaseline2` and after) does the same for everything declared before it, the earlier baseline
 * included: a run records the newest baseline of the release it started on, and a replay asking
 * for a newer one finds no marker and records nothing.
 *
 * The answer for the baseline is kept on `globalThis`, which Temporal's workflow sandbox keeps
 * apart for each workflow execution, because it must be asked once, in the first activation,
 * and read by code that runs in handlers as well as in the run's main path.
 */
import { patched } from "@temporalio/workflow";
import { PATCHES } from "./patches.ts";

type PatchId = (typeof PATCHES)[keyof typeof PATCHES];

const ALL: readonly PatchId[] = Object.values(PATCHES);
/** Baselines, newest first: a run records the newest one as it starts. */
const BASELINES: readonly PatchId[] = [
  PATCHES.releaseBaseline5,
  PATCHES.releaseBaseline4,
  PATCHES.releaseBaselineOfC3c2ddd,
  PATCHES.releaseBaseline3,
  PATCHES.releaseBaseline2,
  PATCHES.releaseBaseline,
];
const IS_BASELINE: ReadonlySet<PatchId> = new Set(BASELINES);

const BASELINE_KEY = Symbol.for("rewind.releaseBaseline");
type BaselineHolder = { [BASELINE_KEY]?: PatchId | false };

/** The baseline whose marker the run has, if any (asked in its first activation). */
function baselineOf(): PatchId | undefined {
  return (globalThis as BaselineHolder)[BASELINE_KEY] || undefined;
}

/** Changes a run with `baseline`'s marker follows without a marker of their own: those declared before it. */
function covers(baseline: PatchId, id: PatchId): boolean {
  return ALL.indexOf(id) < ALL.indexOf(baseline);
}

/** The run's first call, before any command: records the markers of the patches it follows. */
export function announcePatches(): void {
  // A replayed `patched` answers from the run's history: a run records one baseline, the
  // newest when it started, and asking for a newer one in its replay records nothing.
  const baseline = BASELINES.find((id) => patched(id));
  (globalThis as BaselineHolder)[BASELINE_KEY] = baseline ?? false;
  if (baseline) {
    // In declaration order: those declared after the run's baseline (none for a run of today).
    for (const id of ALL.slice(ALL.indexOf(baseline) + 1)) if (!IS_BASELINE.has(id)) patched(id);
    return;
  }
  if (!patched(PATCHES.patchesAnnouncedFirst)) return;
  // In declaration order, which is append-only: a replay sends the same markers in the same order.
  for (const id of ALL) if (!IS_BASELINE.has(id)) patched(id);
}

/** Whether the run follows the change `id`: what `patched(id)` answers, without a marker for a change its baseline covers. */
export function isPatched(id: PatchId): boolean {
  const baseline = baselineOf();
  return (baseline !== undefined && covers(baseline, id)) || patched(id);
}
