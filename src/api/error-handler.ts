/**
 * Renders every failure of a request as one JSON shape. Known errors (HttpError, body-parser's
 * own, and other 4xx errors with a status but no type: a corrupt gzip body, a malformed `%`
 * escape in a path parameter) keep their status and say what was wrong. Temporal being
 * unreachable (stopped, or the network to it down) is a 503 `unavailable` that says so, not the
 * caller's fault nor an internal error: the request may succeed once Temporal is back. Other
 * unknown errors are logged with the request and become a 500 that reveals nothing.
 */
import type { ErrorRequestHandler, RequestHandler } from "express";
import { HttpError } from "./http-error.ts";
import type { Logger } from "../shared/index.ts";
import { isTemporalUnreachable, temporalCallFailure } from "../temporal/index.ts";

/** The Temporal the API talks to, as the error handler needs it: where it is, and whether it answers now. */
export interface TemporalReach {
  address: string;
  answers(): Promise<boolean>;
}

export const TEMPORAL_UNAVAILABLE_MESSAGE = "Temporal is unreachable: the request did not complete; try again";

interface BodyParserError {
  type?: string;
  status: number;
  message: string;
}

function isBodyParserError(error: unknown): error is BodyParserError {
  return typeof error === "object" && error !== null && typeof (error as { status?: unknown }).status === "number";
}

function fromBodyParser(error: BodyParserError): HttpError | undefined {
  switch (error.type) {
    case "entity.parse.failed":
      return new HttpError(400, "invalidJson", `the request body is not valid JSON: ${error.message}`);
    case "entity.too.large":
      return new HttpError(413, "payloadTooLarge", "the request body is larger than the API accepts");
    case "encoding.unsupported":
    case "charset.unsupported":
      return new HttpError(415, "unsupportedMediaType", error.message);
    default:
      return error.status >= 400 && error.status < 500
        ? new HttpError(error.status, "badRequest", error.message)
        : undefined;
  }
}

/**
 * `temporal` unset (an app without Temporal, in tests): its failures are 500s like any other.
 * The 503's message names neither Temporal's address nor the transport's words (a tenant need
 * not learn the cluster's network); the operator's log has both.
 */
export function createErrorHandler(logger: Logger, temporal?: TemporalReach): ErrorRequestHandler {
  return async function renderError(error: unknown, req, res, _next) {
    const known = error instanceof HttpError ? error : isBodyParserError(error) ? fromBodyParser(error) : undefined;
    if (known) {
      res.status(known.status).json({ error: { code: known.code, message: known.message, details: known.details } });
      return;
    }
    if (temporal && (await isTemporalUnreachable(error, () => temporal.answers()))) {
      logger.warn("Temporal is unreachable", {
        method: req.method,
        path: req.path,
        temporal: temporal.address,
        reason: temporalCallFailure(error)?.reason,
      });
      res
        .status(503)
        .json({ error: { code: "unavailable", message: TEMPORAL_UNAVAILABLE_MESSAGE, details: undefined } });
      return;
    }
    logger.error("request failed", {
      method: req.method,
      path: req.path,
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
    res.status(500).json({ error: { code: "internal", message: "internal error", details: undefined } });
  };
}

export const notFoundRoute: RequestHandler = function unknownRoute(req, _res, next) {
  next(new HttpError(404, "notFound", `no route ${req.method} ${req.path}`));
};
