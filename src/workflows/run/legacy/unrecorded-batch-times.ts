/**
 * Before `PATCHES.batchTimesRecorded`: a batch was noted in the journal, at the workflow clock
 * of the activation, before the step that fed it ran, and speculative steps could be adopted
 * while it ran. A replay after a timed-out workflow task could see that clock differently, so
 * the chain differed and the replay took another path; runs recorded that way replay it here.
 */
import type { AdvanceInput, AdvanceResult } from "../../../shared/index.ts";
import type { JournalBook } from "../journal-book.ts";

type StepInput = Omit<AdvanceInput, "cold">;

export async function feedWithWorkflowClock(
  journal: JournalBook,
  seqs: number[],
  at: number,
  step: (input: StepInput) => Promise<AdvanceResult>,
  base: Omit<StepInput, "batches">,
): Promise<AdvanceResult> {
  const batch = journal.addBatch(at, seqs);
  return step({ ...base, batches: [batch] });
}
