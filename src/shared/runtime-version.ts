/**
 * The version of the sandbox runtime (the JavaScript that runs around every script: clock,
 * randomness, ToolError, the promise table) that a run started on. A run records it in its
 * input, so a later release that changes what a script observes can keep the old behaviour
 * for runs that started on it: replaying a run's journal in the sandbox must make exactly the
 * calls it made. Bump it with every such change, and keep every older version's behaviour.
 */

/**
 * The runtime this release starts runs on.
 * 1: 3477167, the first release.
 * 2: a run's result may be 16 MiB of JSON on its own (it was counted against the step's 1 MiB).
 */
export const SANDBOX_RUNTIME_VERSION = 2;

/** Runs started before runs recorded a version ran version 1. */
export function runtimeVersionOf(recorded: { runtimeVersion?: number | undefined }): number {
  return recorded.runtimeVersion ?? 1;
}
