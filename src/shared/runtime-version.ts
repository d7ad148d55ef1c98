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
 * 3: an MCP result that is one text block becomes a value only when its text is a JSON object or
 *    array; any other text (`42`, `true`, `9007199254740993`) reaches the script as the string
 *    it is (it was parsed as any JSON, losing digits past 2^53). See `resultValue`; the run's
 *    version travels to the `callMcpTool` activity in its input.
 * 4: an MCP result is checked against the tool's pinned output schema, when it has one: a
 *    `structuredContent` that does not fit it (or none) fails the call `invalidResult`, the
 *    server's answer in `details`; and a tool's own failure (`isError`) keeps its
 *    `structuredContent` in `ToolError.details` beside the content blocks. The schema travels to
 *    the activity in its input, for runs of this runtime only. And a result object of more keys
 *    than the observed-shape limit is observed as a record (`Record<string, T>`), not as its
 *    first keys (see ShapeOptions).
 */
export const SANDBOX_RUNTIME_VERSION = 4;

/** Runs started before runs recorded a version ran version 1. */
export function runtimeVersionOf(recorded: { runtimeVersion?: number | undefined }): number {
  return recorded.runtimeVersion ?? 1;
}
