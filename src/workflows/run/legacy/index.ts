/**
 * What the run loop still does for histories recorded before a change to it, one file per
 * change, each named after the patch that keeps it. A run that started before the change replays
 * its history this way and follows the new rule from its first new workflow task; a new run
 * never comes here. A file goes when its patch is deprecated: once the replay corpus
 * (`test/histories/`) holds no history from before the change and no open run can.
 *
 * Older behaviours of the other parts of the run (how it ends, parks, wakes on credentials,
 * observes results) stay beside the code they vary, behind the patches `patches.ts` names.
 */
export { feedWithWorkflowClock } from "./unrecorded-batch-times.ts";
export { followsDeferralRuleOfItsStart, wakeStalledDeferral } from "./deferred-steps-until-chain.ts";
export { neverStartedOnSessionQueue } from "./session-queue-calls.ts";
