/**
 * The run workflow: alternate between advancing the script in the sandbox and dispatching the
 * calls it issued, feeding completions back in the order they happened. Determinism rests on
 * the journal: the script's only inputs are the run input and the batches of completions, each
 * with the workflow time at which it was fed. Before history grows too long, the run drains its
 * tool calls and continues as new, carrying the journal.
 *
 * This file is the loop; createRun (create-run.ts) builds what it drives. A step either comes
 * from the sandbox (`run.feed`: a local activity on this worker) or was already taken by the
 * worker that finished a call and adopted by SpeculativeSteps (`adopted`): the loop treats both
 * the same.
 */
import type { AdvanceResult, RunInput } from "../../shared/index.ts";
import { createRun, type Run } from "./create-run.ts";
import { announcePatches } from "./run-patches.ts";
import { refusedColdStart } from "./sandbox-step.ts";

export async function runScript(input: RunInput): Promise<unknown> {
  announcePatches();
  const run = createRun(input);
  try {
    return await runLoop(run);
  } catch (error) {
    return run.endOnError(error);
  }
}

/** Advances the script until it ends; answers how. */
async function runLoop(run: Run): Promise<unknown> {
  const begun = await run.begin();
  if ("ended" in begun) return begun.ended;
  let outcome: AdvanceResult = begun.outcome;
  for (;;) {
    // Asked for while the script stepped: what that step issued is never recorded nor sent.
    if (run.rollback.requested) return run.rollBack();
    if (outcome.kind === "needsColdStart") throw refusedColdStart();
    run.issue(outcome);
    if (outcome.kind === "done" || outcome.kind === "failed") return run.finish(outcome);
    const stuck = run.endIfStuck();
    if (stuck) return stuck;
    await run.continueAsNewIfDue();
    const next = await run.ready.next();
    if (run.rollback.requested) return run.rollBack();
    outcome = next.kind === "adopted" ? next.result : await run.feed(next.seqs);
  }
}
