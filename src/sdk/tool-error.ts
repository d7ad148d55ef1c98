/**
 * The error a host tool throws to fail a call on purpose: the script receives it as a
 * `ToolError` with this code and message, and the call is not retried. Any other error thrown
 * by a host tool is an interruption, retried according to the tool's policy.
 *
 * @example
 * throw new ToolError("toolFailed", "no customer with that email", { email });
 */
import type { ToolErrorCode } from "../shared/index.ts";

export class ToolError extends Error {
  override name = "ToolError";
  readonly code: ToolErrorCode;
  readonly details: unknown;

  constructor(code: ToolErrorCode, message: string, details?: unknown) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

export { HOST_TOOL_ERROR_TYPE } from "../shared/index.ts";
