/**
 * The one error type scripts see. It lives in shared/ because the workflow, the activities and
 * the sandbox all speak it: at an activity edge it travels as an ApplicationFailure whose `type`
 * is the code, since `instanceof` does not survive the workflow sandbox's realm.
 */

export const TOOL_ERROR_CODES = [
  "invalidArguments",
  "toolFailed",
  "timedOut",
  "outcomeUnknown",
  "rejected",
  "refused",
  "schemaChanged",
  "cancelled",
  "unknownTool",
  "credentialsMissing",
  "sandboxCrashed",
  "childFailed",
] as const;

export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number];

/** What a failed call looks like in the journal and when fed back into the sandbox. */
export interface ToolErrorData {
  code: ToolErrorCode;
  message: string;
  /** Qualified name, e.g. `github.create_issue`, or a built-in such as `rewind.sleep`. */
  tool: string;
  seq: number;
  details?: unknown;
}

export function isToolErrorCode(value: unknown): value is ToolErrorCode {
  return typeof value === "string" && (TOOL_ERROR_CODES as readonly string[]).includes(value);
}
