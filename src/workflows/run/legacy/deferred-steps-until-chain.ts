/**
 * Before `PATCHES.deferredStepsWaitOnlyForCallsInFlight`: a speculative step taken on a chain
 * the journal did not have yet was deferred for as long as that chain might come, and a run whose
 * chain never came stalled on it until any signal woke it. A run recorded that way keeps the rule
 * while it replays, and from its first new workflow task defers only while the call a step
 * follows is unfinished (SpeculativeSteps).
 */
import { PATCHES } from "../patches.ts";
import { isPatched } from "../run-patches.ts";
import type { SpeculativeSteps } from "../speculative-steps.ts";

/** Whether the run still defers by the old rule (asked each time: it changes at its first new task). */
export function followsDeferralRuleOfItsStart(): boolean {
  return !isPatched(PATCHES.deferredStepsWaitOnlyForCallsInFlight);
}

/** Before a signal is delivered: a run of the old rule that stalled on a deferred step wakes on it. */
export function wakeStalledDeferral(speculative: SpeculativeSteps): void {
  if (speculative.deferredCount > 0 && !followsDeferralRuleOfItsStart()) speculative.discardDeferred();
}
