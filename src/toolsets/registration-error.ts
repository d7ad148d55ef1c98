/**
 * The one error registration throws: its status (400 a bad request, 404 a missing base or
 * workflow, 422 a server or schema that can't be pinned) and details naming what is at fault.
 * The route renders it; nothing is stored when it is thrown.
 */
export class RegistrationError extends Error {
  override name = "RegistrationError";
  readonly status: 400 | 404 | 422;
  readonly details: Record<string, unknown>;

  constructor(status: 400 | 404 | 422, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.status = status;
    this.details = details;
  }
}
