/**
 * `GET /metrics` on the API's own port, in Prometheus' text format, for loopback callers only,
 * and only while no API keys are set: tenants' keys open the API, not the operator's metrics
 * (which name tool groups of every tenant), and with keys set a loopback caller may be any
 * tenant's code on the same host. Scrapers use the listener REWIND_METRICS_PORT opens instead.
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

export function createMetricsRoute(metrics: MetricsRouteDeps, logger: Logger, apiKeysSet: boolean): RequestHandler {
  return function serveMetrics(req, res, next) {
    if (apiKeysSet) {
      next(
        new HttpError(
          401,
          "unauthorized",
          "with REWIND_API_KEYS set, the API's port serves no metrics; scrape the listener REWIND_METRICS_PORT opens",
        ),
      );
      return;
    }
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
