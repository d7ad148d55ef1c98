/**
 * Who may use the console, and proof that a form was sent by the console's own page.
 *
 * With API keys, a person signs in by posting a key to `/ui/session`; the answer sets a cookie
 * holding the session, sealed (sessions.ts: the key's namespace and principal, never the key;
 * HttpOnly, so no script reads it; SameSite=Strict, so no other site's page sends it; Secure over
 * https). The key never goes into a URL or a cookie. Without keys, the console
 * serves loopback callers as the API does, as `default/loopback`, and hands each browser a
 * session of that principal on its first visit, so its forms carry a token all the same: a page
 * of another site open in the same browser must not be able to post to a console on loopback.
 * Without keys the Host must be a loopback name too, so a name of another site made to resolve to
 * 127.0.0.1 (DNS rebinding) reaches nothing.
 *
 * Every post must come from the console's origin (the Origin header, when the browser sends one,
 * names this host, or the one a proxy forwarded for; a cross-site Sec-Fetch-Site is refused) and
 * carry the session's token.
 */
import type { Request, RequestHandler, Response } from "express";
import { createKeyCheck, DEFAULT_NAMESPACE, isLoopback, LOOPBACK_PRINCIPAL } from "../auth.ts";
import { CSRF_FIELD, type Viewer } from "./layout.ts";
import { isSessionToken, type ConsoleSession, type SessionStore } from "./sessions.ts";

export const SESSION_COOKIE = "rewind_console";

/** A request the console refuses before any route sees it (the console renders it as a page). */
export class ConsoleRefusal extends Error {
  override name = "ConsoleRefusal";
  readonly status: 401 | 403;
  constructor(status: 401 | 403, message: string) {
    super(message);
    this.status = status;
  }
}

declare module "express-serve-static-core" {
  interface Locals {
    /** The console's signed-in person, set by the console's session middleware. */
    viewer?: Viewer;
    session?: ConsoleSession;
  }
}

function cookieOf(req: Request, name: string): string | undefined {
  for (const pair of (req.headers.cookie ?? "").split(";")) {
    const at = pair.indexOf("=");
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

/** Whether the browser reached us over https (itself, or through a proxy that says so). */
const overHttps = (req: Request): boolean => req.secure || req.get("x-forwarded-proto") === "https";

export function setSessionCookie(req: Request, res: Response, session: ConsoleSession): void {
  res.cookie(SESSION_COOKIE, session.id, {
    httpOnly: true,
    sameSite: "strict",
    secure: overHttps(req),
    path: "/ui",
    expires: new Date(session.expiresAt),
  });
}

export function clearSessionCookie(req: Request, res: Response): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: "strict", secure: overHttps(req), path: "/ui" });
}

/** A Host header naming this machine: localhost, 127.x.x.x or [::1], with any port. */
function loopbackHost(host: string | undefined): boolean {
  const name = (host ?? "").replace(/:\d+$/, "").toLowerCase();
  return name === "localhost" || /^127(\.\d{1,3}){3}$/.test(name) || name === "[::1]";
}

export interface ConsoleAuth {
  /** Whether people sign in with API keys (else: loopback, as `default`). */
  keyed: boolean;
  /** Finds the session (or, without keys, makes one); sets `res.locals.viewer` and the request's namespace and principal. */
  identify: RequestHandler;
  /** Refuses a page to whom it does not know: to the sign-in page for a page, 401 for anything else. */
  requireViewer: RequestHandler;
  /** Refuses a post from another origin or without the session's token. */
  checkPost: RequestHandler;
  /** Refuses a post from another origin (the sign-in form, which has no session yet). */
  checkOrigin: RequestHandler;
  /** The holder of a key, if it is one. */
  holderOf: ReturnType<typeof createKeyCheck>;
}

export function createConsoleAuth(apiKeys: Map<string, string>, sessions: SessionStore): ConsoleAuth {
  const keyed = apiKeys.size > 0;
  const holderOf = createKeyCheck(apiKeys);

  const identify: RequestHandler = function identifyViewer(req, res, next) {
    if (!keyed) {
      if (!isLoopback(req.socket.remoteAddress))
        return next(new ConsoleRefusal(401, "this console serves only loopback callers until REWIND_API_KEYS is set"));
      if (!loopbackHost(req.get("host")))
        return next(
          new ConsoleRefusal(
            403,
            "without API keys, the console answers only to a loopback host name (localhost, 127.0.0.1, [::1])",
          ),
        );
    }
    let session = sessions.get(cookieOf(req, SESSION_COOKIE));
    if (!session && !keyed && req.method === "GET") {
      session = sessions.create({ namespace: DEFAULT_NAMESPACE, principal: LOOPBACK_PRINCIPAL });
      setSessionCookie(req, res, session);
    }
    if (session) {
      res.locals.session = session;
      res.locals.viewer = {
        namespace: session.namespace,
        principal: session.principal,
        csrf: session.csrf,
        signedIn: keyed,
      };
      req.namespace = session.namespace;
      req.principal = session.principal;
    }
    next();
  };

  const requireViewer: RequestHandler = function requireViewer(req, res, next) {
    if (res.locals.viewer) return next();
    if (req.method === "GET" && keyed) return res.redirect(303, "/ui/sign-in");
    next(
      new ConsoleRefusal(401, keyed ? "sign in with an API key first" : "this page was not opened from the console"),
    );
  };

  const checkOrigin: RequestHandler = function checkOrigin(req, _res, next) {
    const origin = req.get("origin");
    const site = req.get("sec-fetch-site");
    let sameHost = true;
    if (origin !== undefined) {
      // Behind a proxy that rewrites Host, the host the browser used is its X-Forwarded-Host. A
      // page of another site cannot set that header on a form, nor on a fetch without a CORS
      // preflight this API never allows.
      const hosts = [req.get("host"), req.get("x-forwarded-host")];
      try {
        sameHost = hosts.includes(new URL(origin).host);
      } catch {
        sameHost = false;
      }
    }
    if (!sameHost || (site !== undefined && site !== "same-origin" && site !== "none"))
      return next(new ConsoleRefusal(403, "this form was not sent from the console's own page"));
    next();
  };

  const checkPost: RequestHandler = function checkPost(req, res, next) {
    checkOrigin(req, res, (error?: unknown) => {
      if (error) return next(error);
      const session = res.locals.session;
      const body: unknown = req.body;
      const given =
        typeof body === "object" && body !== null ? (body as Record<string, unknown>)[CSRF_FIELD] : undefined;
      if (!session || !isSessionToken(session, given))
        return next(
          new ConsoleRefusal(403, "this form's token is missing or out of date: reload the page and try again"),
        );
      next();
    });
  };

  return { keyed, identify, requireViewer, checkPost, checkOrigin, holderOf };
}
