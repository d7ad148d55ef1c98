/**
 * `GET /metrics` on the API's own port, in Prometheus' text format, for loopback callers only:
 * tenants' API keys open the API, not the operator's metrics (which name tool groups of every
 * tenant). Scrapers elsewhere use the listener REWIND_METRICS_PORT opens.
 */
import type { RequestHandler } from "express";
import type { Logger } from "../../shared/index.ts";
import { HttpError } from "../http-error.ts";

export interface MetricsRouteDeps {
  contentType: string;
  scrape(): Promise<string>;
}

function isLoopback(address: string | undefined): boolean {
  return address === "::1" || address?.startsWith("127.") === true || address?.startsWith("::ffff:127.") === true;
}

export function createMetricsRoute(metrics: MetricsRouteDeps, logger: Logger): RequestHandler {
  return function serveMetrics(req, res, next) {
    if (!isLoopback(req.socket.remoteAddress)) {
      next(
        new HttpError(
          401,
          "unauthorized",
          "/metrics answers loopback callers only; scrape the listener REWIND_METRICS_PORT opens",
        ),
      );
      return;
    }
    metrics.scrape().then(
      (text) => {
        res.type(metrics.contentType).send(text);
      },
      (error: unknown) => {
        logger.warn("a metrics scrape failed", { error: String(error) });
        next(error);
      },
    );
  };
}
