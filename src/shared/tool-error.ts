/**
 * The one error type scripts see. It lives in shared/ because the workflow, the activities and
 * the sandbox all speak it: at an activity edge it travels as an ApplicationFailure whose `type`
 * is the code, since `instanceof` does not survive the workflow sandbox's realm.
 */

/** Every code a script's ToolError can carry; docs/errors.md says what produces each. */
export const TOOL_ERROR_CODES = [
  "invalidArguments",
  "toolFailed",
  "timedOut",
  "outcomeUnknown",
  "rejected",
  "refused",
  "schemaChanged",
  "unknownTool",
  "childFailed",
  "invalidResult",
] as const;

/**
 * Codes once listed, which nothing in Rewind produces. A host tool could have thrown one through
 * the SDK's ToolError: the workflow passes such a code on as it did when the run was recorded.
 */
export const RETIRED_TOOL_ERROR_CODES = ["cancelled", "credentialsMissing", "sandboxCrashed"] as const;

export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number];
export type RetiredToolErrorCode = (typeof RETIRED_TOOL_ERROR_CODES)[number];

/** What a failed call looks like in the journal and when fed back into the sandbox. */
export interface ToolErrorData {
  code: ToolErrorCode | RetiredToolErrorCode;
  message: string;
  /** Qualified name, e.g. `github.create_issue`, or a built-in such as `rewind.sleep`. */
  tool: string;
  seq: number;
  details?: unknown;
}

/** A code a host tool's ToolError may carry to the script: a current one, or a retired one. */
export function isHostToolErrorCode(value: unknown): value is ToolErrorCode | RetiredToolErrorCode {
  return (
    typeof value === "string" &&
    ((TOOL_ERROR_CODES as readonly string[]).includes(value) ||
      (RETIRED_TOOL_ERROR_CODES as readonly string[]).includes(value))
  );
}
