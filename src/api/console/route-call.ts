/**
 * How the console decides anything: by calling the API's own route, in this process, as the
 * signed-in key's namespace and principal. Approving a call from the console runs the very
 * handler `POST /v1/runs/{id}/calls/{seq}/approve` runs — its body schema, its checks, its
 * service call and its refusals — so the console can do nothing the API would refuse to the
 * same key, and no decision has a second implementation to drift from the first.
 *
 * The route sees a request made from the console's own (its url, method and JSON body set,
 * headers of its own), and answers into a stand-in for the response that keeps the status and
 * the body instead of writing them: the console renders the outcome as a page. A refusal
 * (HttpError) rejects the call with that error, as the API's error handler would render it.
 */
import { Router, type Request, type Response } from "express";

export interface RouteAnswer {
  status: number;
  body: unknown;
}

export interface RouteCall {
  method: "POST" | "PUT";
  /** The API's path, e.g. `/v1/runs/run_…/calls/2/approve`. */
  path: string;
  /** The JSON body the route reads. */
  body: unknown;
}

/** Calls one of `routers`' routes as `req`'s namespace and principal. */
export type RouteCaller = (req: Request, call: RouteCall) => Promise<RouteAnswer>;

export function createRouteCaller(routers: Router[]): RouteCaller {
  const api = Router();
  for (const router of routers) api.use(router);
  return function callRoute(req, call) {
    return new Promise<RouteAnswer>((resolve, reject) => {
      const inner = Object.create(req) as Request;
      Object.assign(inner, {
        method: call.method,
        url: call.path,
        originalUrl: call.path,
        body: call.body,
        headers: { "content-type": "application/json" },
        params: {},
        namespace: req.namespace,
        principal: req.principal,
      });
      let status = 200;
      const answer = (body: unknown) => {
        resolve({ status, body });
        return res;
      };
      const res = Object.assign(Object.create(req.res ?? null) as Response, {
        status(code: number) {
          status = code;
          return res;
        },
        location: () => res,
        setHeader: () => res,
        set: () => res,
        type: () => res,
        json: answer,
        send: answer,
        end: () => answer(undefined),
        sendStatus(code: number) {
          status = code;
          return answer(undefined);
        },
      });
      api(inner, res, (error?: unknown) => {
        if (error) reject(error instanceof Error ? error : new Error(String(error)));
        else reject(new Error(`the API has no route ${call.method} ${call.path}`));
      });
    });
  };
}
