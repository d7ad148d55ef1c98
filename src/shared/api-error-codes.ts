/**
 * Every error code the API answers with, and the HTTP status each answers with. The one list:
 * the error handler renders it, the OpenAPI document enumerates it, and the SDK's client types
 * `RewindApiError.code` by it. docs/errors.md says what produces each and what a caller does.
 */

export const API_ERRORS = {
  /** The request's body, query or path is not what the route accepts; `details.problems` lists why. */
  badRequest: { status: 400 },
  /** The body is not valid JSON. */
  invalidJson: { status: 400 },
  /** The body's encoding or charset is not one the API reads. */
  unsupportedMediaType: { status: 415 },
  /** The body, or what a request asks to decode, is larger than the API accepts. */
  payloadTooLarge: { status: 413 },
  /** The script does not type-check against its toolset; `details.diagnostics` lists each. */
  typeCheckFailed: { status: 422 },
  /** The type-check ran past its deadline or memory cap and was abandoned; `details.reason` says which. */
  typeCheckTimedOut: { status: 422 },
  /** The toolset cannot be registered: a server or tool it names is refused. */
  toolsetRejected: { status: 422 },
  /** The outbound target policy refuses the address. */
  targetNotAllowed: { status: 422 },
  /** A run's script cannot be saved against a toolset that lacks tools the run called; `details.tools` names them. */
  toolsMissing: { status: 422 },
  /** An answer to a parked call does not fit the schema the call asked for. */
  invalidAnswer: { status: 422 },
  /** No valid API key, or a caller the route does not serve. */
  unauthorized: { status: 401 },
  /** The route, run, toolset or payload does not exist (or belongs to another namespace). */
  notFound: { status: 404 },
  /** The run is in a state that no longer allows the request. */
  conflict: { status: 409 },
  /** Temporal, or a worker serving the run, did not answer (or the namespace's type-check queue is full); the request may succeed later. */
  unavailable: { status: 503 },
  /** Anything else; the API logs it and reveals nothing. */
  internal: { status: 500 },
} as const;

export type ApiErrorCode = keyof typeof API_ERRORS;

export const API_ERROR_CODES = Object.keys(API_ERRORS) as [ApiErrorCode, ...ApiErrorCode[]];

/**
 * The status a code answers with. `badRequest` also covers the other 4xx statuses a request's
 * parser reports (a corrupt gzip body, a malformed `%` escape), keeping their status.
 */
export type ApiErrorStatus<C extends ApiErrorCode> = C extends "badRequest" ? number : (typeof API_ERRORS)[C]["status"];

export function apiErrorStatus(code: ApiErrorCode): number {
  return API_ERRORS[code].status;
}

export function isApiErrorCode(value: unknown): value is ApiErrorCode {
  return typeof value === "string" && Object.hasOwn(API_ERRORS, value);
}

/**
 * Codes the SDK's client adds for answers that never carried one of the API's: `unreachable`
 * when no answer came at all (status 0), `unexpected` for a non-2xx answer without an error body.
 */
export const CLIENT_ERROR_CODES = ["unreachable", "unexpected"] as const;

export type ClientErrorCode = (typeof CLIENT_ERROR_CODES)[number];
