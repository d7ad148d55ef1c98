/**
 * The one error type of the API. Routes throw it; the error handler renders it as
 * `{ error: { code, message, details } }` with its status. Anything else becomes a plain 500.
 * The codes and the status each answers with are listed once, in shared/api-error-codes.ts; the
 * constructor refuses, at compile time, a status the list does not give the code.
 */
import type { ApiErrorCode, ApiErrorStatus } from "../shared/index.ts";

export type { ApiErrorCode };

/** `[status, code, message, details?]`, with the status the list gives the code. */
type HttpErrorArgs = {
  [C in ApiErrorCode]: [status: ApiErrorStatus<C>, code: C, message: string, details?: unknown];
}[ApiErrorCode];

export class HttpError extends Error {
  override name = "HttpError";
  readonly status: number;
  readonly code: ApiErrorCode;
  readonly details: unknown;

  constructor(...[status, code, message, details]: HttpErrorArgs) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export const notFound = (what: string): HttpError => new HttpError(404, "notFound", `${what} was not found`);
