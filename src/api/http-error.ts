/**
 * The one error type of the API. Routes throw it; the error handler renders it as
 * `{ error: { code, message, details } }` with its status. Anything else becomes a plain 500.
 */
export type ApiErrorCode =
  | "badRequest"
  | "invalidJson"
  | "unsupportedMediaType"
  | "payloadTooLarge"
  | "typeCheckFailed"
  | "toolsetRejected"
  | "targetNotAllowed"
  | "invalidAnswer"
  | "unauthorized"
  | "notFound"
  | "conflict"
  | "unavailable"
  | "internal";

export class HttpError extends Error {
  override name = "HttpError";
  readonly status: number;
  readonly code: ApiErrorCode;
  readonly details: unknown;

  constructor(status: number, code: ApiErrorCode, message: string, details?: unknown) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export const notFound = (what: string): HttpError => new HttpError(404, "notFound", `${what} was not found`);
