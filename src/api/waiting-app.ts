/**
 * What the API answers while it waits for its cluster (the cluster wait, src/temporal/cluster-wait.ts):
 * its listener is up from the start so that probes get an answer, `GET /healthz` says the process
 * is alive, `GET /readyz` says it is not ready (503 `unavailable`, as when Temporal stops under a
 * running API), and every other request gets the same 503: it may succeed once Temporal answers.
 */
import express, { type Express } from "express";
import type { Logger } from "../shared/index.ts";
import { createErrorHandler } from "./error-handler.ts";
import { HttpError } from "./http-error.ts";

/** Names neither Temporal's address nor the transport's words, as the running API's 503 does not. */
export const WAITING_FOR_TEMPORAL_MESSAGE = "the API is waiting for Temporal to answer: try again";

export function createWaitingApp(logger: Logger): Express {
  const app = express();
  app.disable("x-powered-by");
  app.get("/healthz", function health(_req, res) {
    res.json({ ok: true });
  });
  app.use(function waitingForTemporal(_req, _res, next) {
    next(new HttpError(503, "unavailable", WAITING_FOR_TEMPORAL_MESSAGE));
  });
  app.use(createErrorHandler(logger));
  return app;
}
