/**
 * The ApplicationFailure types an attempt of a call fails with, host tools' included. They are
 * stored in Temporal histories and matched by the workflow on replay, so a value never changes;
 * the keys name them in TypeScript and agree with them. What each becomes for the script (a
 * ToolError code, shared/tool-error.ts) is decided in workflows/call-outcome.ts; docs/errors.md
 * lists both.
 */

export const CALL_FAILURE = {
  /** Could not connect: nothing was sent. Retryable under every policy. */
  unreachable: "Unreachable",
  /** The connection broke after the request was sent: outcome unknown. */
  interrupted: "Interrupted",
  /** No answer within the attempt's budget: outcome unknown. */
  attemptTimedOut: "AttemptTimedOut",
  /** The server refused the credentials (401). */
  unauthorized: "Unauthorized",
  /** The server refused the call for lack of scope (403). */
  forbidden: "Forbidden",
  /** The call no longer fits the server's current schema, or the tool is gone. */
  schemaChanged: "SchemaChanged",
  /** The outbound target policy refused the server's address: nothing was sent. Not retried. */
  targetNotAllowed: "TargetNotAllowed",
  /**
   * The call's timeout passed while the server's question (elicitation) waited for the user: the
   * user's silence, not the server's. Not retried: a question is put to the user once per call.
   */
  questionUnanswered: "QuestionUnanswered",
  /**
   * A host tool threw the SDK's ToolError: its code and details travel in the failure's details
   * (`[{ code, details }]`) and the script gets that ToolError. Not retried.
   */
  hostToolError: "HostToolError",
} as const;

export type CallFailureType = (typeof CALL_FAILURE)[keyof typeof CALL_FAILURE];

/** The ApplicationFailure type a ToolError thrown by a host tool travels as. */
export const HOST_TOOL_ERROR_TYPE = CALL_FAILURE.hostToolError;

/**
 * The failure a sandbox step (the `advanceScript` local activity) refuses with when the run
 * started on a sandbox runtime newer than the worker's: the workflow task fails, not the run, so
 * a worker that has the runtime takes it.
 */
export const RUNTIME_VERSION_ERROR_TYPE = "RuntimeVersionError";

/**
 * The failure a sandbox step refuses with when its entry ran into the wall-time backstop before
 * it had used its CPU time: the machine, not the script, is at fault. The local activity tries
 * again; past its attempts the workflow task fails, not the run, and Temporal retries it.
 */
export const MACHINE_BUSY_ERROR_TYPE = "MachineBusyError";
