/**
 * The API's express app, assembled from its parts: auth, then body parsing with a size limit
 * (webhooks carry their own token, checked before their body is read), routes, and the single
 * error handler. Built from dependencies so tests run it in memory.
 */
import express, { type Express } from "express";
import type { Logger } from "../shared/index.ts";
import { createAuth } from "./auth.ts";
import {
  TEMPORAL_UNAVAILABLE_MESSAGE,
  createErrorHandler,
  notFoundRoute,
  type TemporalReach,
} from "./error-handler.ts";
import { HttpError } from "./http-error.ts";
import { serveOpenApi } from "./openapi.ts";
import { createCallOutcomesRouter } from "./routes/call-outcomes.ts";
import { createCodecCors, createCodecRouter, type CodecRouteDeps } from "./routes/codec.ts";
import { createConsole } from "./console/index.ts";
import { createCredentialWriter, createCredentialsRouter, type CredentialsRouteDeps } from "./routes/credentials.ts";
import { createEventsRouter, type EventsRouteDeps } from "./routes/events.ts";
import { createHooksRouter, type HooksRouteDeps } from "./routes/hooks.ts";
import { createMcpRouter } from "./routes/mcp.ts";
import type { FrontDoor } from "./front-door/index.ts";
import { createMetricsRoute, type MetricsRouteDeps } from "./routes/metrics.ts";
import { createRunSaveRouter } from "./routes/run-save.ts";
import { createRunsRouter, type RunsRouteDeps } from "./routes/runs.ts";
import { createScriptApprovalRouter } from "./routes/script-approval.ts";
import { createToolsetsRouter } from "./routes/toolsets.ts";
import { createWorkflowsRouter, type WorkflowsRouteDeps } from "./routes/workflows.ts";

export interface ApiDeps extends RunsRouteDeps, WorkflowsRouteDeps {
  events: EventsRouteDeps;
  hooks: HooksRouteDeps;
  credentials: CredentialsRouteDeps;
  codec: CodecRouteDeps;
  apiKeys: Map<string, string>;
  /** Serves each toolset as an MCP server (`/v1/toolsets/{id}/mcp`); its owner closes it. */
  frontDoor: FrontDoor;
  logger: Logger;
  /** Served as `GET /metrics` to loopback callers while no API keys are set; unset: no such route. */
  metrics?: MetricsRouteDeps;
  /** Where Temporal is and whether it answers: its being unreachable is a 503 `unavailable`. */
  temporal?: TemporalReach;
}

/** A run's input may be 16 MiB of JSON; the body around it (script, credentials) gets 1 MiB more. */
export const MAX_BODY_BYTES = 17 * 1024 * 1024;

export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("query parser", "simple");
  app.get("/healthz", function health(_req, res) {
    res.json({ ok: true });
  });
  // Readiness asks Temporal each time: a load balancer stops sending requests that would only 503.
  app.get("/readyz", async function ready(_req, res) {
    if (!deps.temporal) return void res.json({ ok: true, temporal: "unchecked" });
    if (await deps.temporal.answers()) return void res.json({ ok: true, temporal: "reachable" });
    throw new HttpError(503, "unavailable", TEMPORAL_UNAVAILABLE_MESSAGE);
  });
  app.get("/openapi.json", serveOpenApi);
  // Before the API keys: a tenant's key does not open the operator's metrics (loopback only).
  if (deps.metrics) app.get("/metrics", createMetricsRoute(deps.metrics, deps.logger, deps.apiKeys.size > 0));
  const parseJson = express.json({ limit: MAX_BODY_BYTES, strict: false });
  // The Temporal Web UI calls the codec routes from the browser: its preflight carries no key,
  // and a 401 must still be readable by the page.
  app.use("/v1/codec", createCodecCors(deps.codec));
  // Webhook URLs carry their own token and are called by third parties: no API key. The router
  // checks the token before it parses the body.
  app.use(createHooksRouter(deps.hooks, parseJson));
  // The console signs people in itself (a session per API key, never the key in the browser).
  app.use("/ui", createConsole(deps));
  // The key is checked before a body is read: a caller without one can't make the API inflate
  // and parse megabytes.
  app.use(createAuth(deps.apiKeys));
  app.use(parseJson);
  const credentialWriter = createCredentialWriter(deps.credentials);
  app.use(createToolsetsRouter({ toolsets: deps.toolsets, credentialWriter }));
  app.use(createMcpRouter({ toolsets: deps.toolsets, frontDoor: deps.frontDoor }));
  app.use(createEventsRouter(deps.events));
  app.use(createWorkflowsRouter(deps));
  app.use(createCredentialsRouter(credentialWriter));
  app.use(createRunsRouter(deps));
  app.use(createRunSaveRouter(deps));
  app.use(createCallOutcomesRouter(deps));
  app.use(createScriptApprovalRouter(deps));
  app.use(createCodecRouter(deps.codec));
  app.use(notFoundRoute);
  app.use(createErrorHandler(deps.logger, deps.temporal));
  return app;
}
