/**
 * The console, `/ui` on the API: an express app of its own, mounted by the API's app before the
 * API's key check (the console signs people in itself, console-auth.ts). Server-rendered pages,
 * a stylesheet and one small script; every read goes through the run service and the toolset
 * registry with the viewer's namespace, every decision through the API's own route
 * (console-actions.ts). Every answer carries a strict Content-Security-Policy (nothing inline,
 * nothing from elsewhere, no framing) and is never cached but for the digest-named assets.
 */
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler } from "express";
import type { Logger } from "../../shared/index.ts";
import { TOOLSET_ID_PATTERN } from "../../contract/index.ts";
import { isTemporalUnreachable } from "../../temporal/index.ts";
import type { TemporalReach } from "../error-handler.ts";
import { HttpError, notFound } from "../http-error.ts";
import { RUN_ID_PATTERN } from "../run-service.ts";
import { createCallOutcomesRouter } from "../routes/call-outcomes.ts";
import { createRunsRouter, type RunsRouteDeps } from "../routes/runs.ts";
import { createScriptApprovalRouter } from "../routes/script-approval.ts";
import { serveAsset } from "./assets.ts";
import { createConsoleActions } from "./console-actions.ts";
import { principalsOf } from "../auth.ts";
import { ConsoleRefusal, clearSessionCookie, createConsoleAuth, setSessionCookie } from "./console-auth.ts";
import { jsonText } from "./format.ts";
import type { Viewer } from "./layout.ts";
import { errorPage, signInPage } from "./plain-pages.ts";
import { createRouteCaller } from "./route-call.ts";
import { createRunReader, liveHtml, runPageHtml, stateVersion } from "./run-page.ts";
import { renderRunsPage, runsRegion } from "./runs-page.ts";
import { createSessionStore, type SessionStoreOptions } from "./sessions.ts";
import { toolsetPageHtml } from "./toolset-page.ts";

/** What the API's app has: the console's decisions go through the API's routers built from the same. */
export interface ConsoleDeps extends RunsRouteDeps {
  apiKeys: Map<string, string>;
  logger: Logger;
  temporal?: TemporalReach | undefined;
  /** How long sessions last, how many sign-outs a process remembers; the defaults are sessions.ts's. */
  sessions?: SessionStoreOptions;
}

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

const securityHeaders: RequestHandler = function securityHeaders(_req, res, next) {
  res.setHeader("content-security-policy", CONTENT_SECURITY_POLICY);
  res.setHeader("x-content-type-options", "nosniff");
  // Not no-referrer: with it, browsers send `Origin: null` on a form post, and the origin check needs the origin.
  res.setHeader("referrer-policy", "same-origin");
  res.setHeader("x-frame-options", "DENY");
  res.setHeader("cross-origin-opener-policy", "same-origin");
  res.setHeader("cross-origin-resource-policy", "same-origin");
  res.setHeader("cache-control", "no-store");
  next();
};

function viewerOf(res: { locals: { viewer?: Viewer } }): Viewer {
  const viewer = res.locals.viewer;
  if (!viewer) throw new Error("console session middleware did not run");
  return viewer;
}

function runIdOf(req: Request): string {
  const id = String((req.params as Record<string, string>)["id"] ?? "");
  if (!RUN_ID_PATTERN.test(id)) throw notFound(`run ${id}`);
  return id;
}

const afterOf = (req: Request): number => {
  const after = Number(req.query["after"] ?? 0);
  return Number.isInteger(after) && after > 0 ? after : 0;
};

export function createConsole(deps: ConsoleDeps): Express {
  const ui = express();
  ui.disable("x-powered-by");
  ui.set("query parser", "simple");
  const principals = principalsOf(deps.apiKeys);
  const sessions = createSessionStore(deps.box, (principal) => principals.has(principal), deps.sessions);
  const auth = createConsoleAuth(deps.apiKeys, sessions);
  const readRun = createRunReader(deps.runs);
  // The API's own routes for every decision: runs (calls, cancel, fork, credentials, rollback),
  // unknown outcomes (resolve, retry, fail) and the script's approval.
  const callRoute = createRouteCaller([
    createRunsRouter(deps),
    createCallOutcomesRouter(deps),
    createScriptApprovalRouter(deps),
  ]);
  const sendHtml = (res: express.Response, body: { text: string }, status = 200) =>
    res.status(status).type("html").send(body.text);

  ui.use(securityHeaders);
  ui.use(serveAsset);
  ui.use(auth.identify);
  // A fork carries a script of up to 512 KiB, which form encoding may make three times as long.
  ui.use(express.urlencoded({ extended: false, limit: "2mb", parameterLimit: 200 }));

  ui.get("/", (_req, res) => res.redirect(303, "/ui/runs"));
  ui.get("/sign-in", function signIn(_req, res) {
    if (!auth.keyed || res.locals.viewer) return res.redirect(303, "/ui/runs");
    sendHtml(res, signInPage());
  });
  ui.post("/session", auth.checkOrigin, function startSession(req, res) {
    const body = req.body as Record<string, unknown> | undefined;
    const key = typeof body?.["key"] === "string" ? body["key"] : "";
    const holder = auth.keyed ? auth.holderOf(key) : undefined;
    if (!holder) return sendHtml(res, signInPage("That is not an API key of this Rewind."), 401);
    const previous = res.locals.session;
    if (previous) sessions.delete(previous.id);
    setSessionCookie(req, res, sessions.create(holder));
    res.redirect(303, "/ui/runs");
  });
  ui.post("/session/end", auth.checkPost, function endSession(req, res) {
    const session = res.locals.session;
    if (session) sessions.delete(session.id);
    clearSessionCookie(req, res);
    res.redirect(303, auth.keyed ? "/ui/sign-in" : "/ui/runs");
  });

  ui.use(auth.requireViewer);

  ui.get("/runs", async function runsPage(req, res) {
    sendHtml(res, await renderRunsPage(deps.runs, req, viewerOf(res)));
  });
  ui.get("/runs/live", async function runsLive(req, res) {
    const { region, version } = await runsRegion(deps.runs, req, viewerOf(res));
    if (version !== undefined && req.query["v"] === version) return void res.status(204).end();
    sendHtml(res, region);
  });
  ui.get("/runs/:id", async function runPage(req, res) {
    const viewer = viewerOf(res);
    sendHtml(res, runPageHtml(await readRun(runIdOf(req), viewer.namespace, afterOf(req)), viewer));
  });
  ui.get("/runs/:id/live", async function runLive(req, res) {
    const viewer = viewerOf(res);
    const state = await readRun(runIdOf(req), viewer.namespace, afterOf(req));
    if (req.query["v"] === stateVersion(state)) return void res.status(204).end();
    sendHtml(res, liveHtml(state, { runId: state.view.id, viewer }));
  });
  // Whole values, read only when a reader follows the link beside a cut one.
  const sendValue = (res: express.Response, value: unknown) =>
    res.type("text/plain; charset=utf-8").send(jsonText(value));
  ui.get("/runs/:id/result", async function runResult(req, res) {
    sendValue(res, (await deps.runs.get(runIdOf(req), viewerOf(res).namespace)).result);
  });
  ui.get("/runs/:id/input", async function runInput(req, res) {
    sendValue(res, (await deps.runs.startInput(runIdOf(req), viewerOf(res).namespace)).input);
  });
  ui.get("/runs/:id/calls/:seq/:part", async function callValue(req, res) {
    const runId = runIdOf(req);
    const seq = Number(req.params.seq);
    const part = req.params.part;
    if (!Number.isInteger(seq) || seq < 1 || (part !== "args" && part !== "result"))
      throw notFound(`call ${req.params.seq}`);
    const page = await deps.runs.journal(runId, viewerOf(res).namespace, seq - 1, 1, 8 * 1024 * 1024);
    const entry = page.entries.find((e) => e.seq === seq);
    if (!entry) throw notFound(`call ${seq} of run ${runId}`);
    sendValue(res, part === "args" ? entry.args : entry.result);
  });
  ui.get("/toolsets/:id", async function toolsetPage(req, res) {
    const id = req.params.id;
    const toolset = TOOLSET_ID_PATTERN.test(id) ? await deps.toolsets.get(id, viewerOf(res).namespace) : undefined;
    if (!toolset) throw notFound(`toolset ${id}`);
    const query = typeof req.query["q"] === "string" ? req.query["q"] : undefined;
    sendHtml(res, toolsetPageHtml(toolset, viewerOf(res), query));
  });

  ui.post("/runs/:id/*rest", auth.checkPost);
  ui.use(createConsoleActions({ runs: deps.runs, callRoute, readRun }));

  ui.use(function unknownPage(req, _res, next) {
    next(new HttpError(404, "notFound", `no page ${req.method} /ui${req.path}`));
  });
  ui.use(createConsoleErrorHandler(deps.logger, deps.temporal));
  return ui;
}

/** Every failure as a page: refusals say why, Temporal gone says so, anything else is logged and says nothing more. */
function createConsoleErrorHandler(logger: Logger, temporal: TemporalReach | undefined): ErrorRequestHandler {
  return async function renderConsoleError(error: unknown, req, res, _next) {
    const viewer = res.locals.viewer;
    if (error instanceof HttpError || error instanceof ConsoleRefusal)
      return res
        .status(error.status)
        .type("html")
        .send(errorPage(error.status, error.message, viewer).text);
    const status = (error as { status?: unknown }).status;
    if (typeof status === "number" && status >= 400 && status < 500)
      return res
        .status(status)
        .type("html")
        .send(errorPage(status, "the request could not be read", viewer).text);
    if (temporal && (await isTemporalUnreachable(error, () => temporal.answers())))
      return res
        .status(503)
        .type("html")
        .send(errorPage(503, "Temporal is unreachable: try again in a moment", viewer).text);
    logger.error("console request failed", {
      method: req.method,
      path: req.originalUrl.split("?")[0],
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
    res
      .status(500)
      .type("html")
      .send(errorPage(500, "the console could not answer; the API's log says why", viewer).text);
  };
}
