/**
 * Every change to the run workflow that alters the commands it issues, named once. Runs left
 * open by an earlier release replay their history with the behaviour they started with
 * (`patched()` is false while replaying events recorded before the change) and take the new
 * behaviour from their first new workflow task on. A patch is deprecated (`deprecatePatch`)
 * only once no open run can hold a history from before it, and removed one release after that.
 * `test/histories/` replays every release's histories against this code to keep that true.
 */
export const PATCHES = {
  /**
   * 2026-11-30 (after 3477167): a step a worker took with a call's result is used only when it
   * was taken on the journal's current chain; otherwise the call is fed by the run at once.
   * Before, a step taken on another chain was held for the step before it, and could hold the
   * run forever when that step never came (another worker ran the workflow task meanwhile).
   */
  stepsUsedOnlyInOrder: "rewind-steps-used-only-in-order",
} as const;
