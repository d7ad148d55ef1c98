/**
 * A new run asks for every patch once, before its first command, so all its markers are
 * recorded at the head of its first workflow task and each later `patched()` at the place that
 * decides finds its marker already sent.
 *
 * Why: a marker recorded right after a local activity's result could land in the workflow task
 * after the one that holds the activity's marker (the activity finished while its task was being
 * completed, under load). A replay resolves the activity in the earlier task, where the patch is
 * not yet announced to the workflow, so `patched()` answered false there, and the marker in the
 * next task matched no command: a nondeterminism error on every replay of that run (a worker
 * restart, a query of a closed run). Runs recorded before `patchesAnnouncedFirst` have no such
 * head: for them the announcement is skipped and every patch is asked for where it always was.
 */
import { patched } from "@temporalio/workflow";
import { PATCHES } from "./patches.ts";

export function announcePatches(): void {
  if (!patched(PATCHES.patchesAnnouncedFirst)) return;
  // In declaration order, which is append-only: a replay sends the same markers in the same order.
  for (const id of Object.values(PATCHES)) patched(id);
}
