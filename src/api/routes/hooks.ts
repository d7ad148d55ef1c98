/**
 * `POST /v1/hooks/{runId}/{name}?token=…`: what is posted to a run's webhook URL becomes the
 * signal `name` of that run. The token is the only credential (no API key: the URL was handed
 * to a third party), and a wrong or missing one is a 404 before the run is even looked up, and
 * before the body is read: a caller without the token can't make the API inflate and parse it.
 */
import { Router, type RequestHandler } from "express";
import { WorkflowNotFoundError, type Client } from "@temporalio/client";
import type { WebhookTokens } from "../../events/index.ts";
import { deliverSignal } from "../../workflows/messages.ts";
import { HttpError, notFound } from "../http-error.ts";

export interface HooksRouteDeps {
  client: Client;
  webhookTokens: WebhookTokens;
}

/** `parseBody` reads the JSON body; it runs only once the token is known good. */
export function createHooksRouter(deps: HooksRouteDeps, parseBody: RequestHandler): Router {
  const router = Router();

  const checkToken: RequestHandler<{ runId: string; name: string }> = function checkHookToken(req, _res, next) {
    const { runId, name } = req.params;
    const token = typeof req.query["token"] === "string" ? req.query["token"] : "";
    if (!token || !deps.webhookTokens.verify(runId, name, token)) throw notFound("webhook");
    next();
  };

  router.post("/v1/hooks/:runId/:name", checkToken, parseBody, async function receiveHook(req, res) {
    const { runId, name } = req.params;
    if (req.body === undefined)
      throw new HttpError(400, "badRequest", "expected a JSON body (Content-Type: application/json)");
    try {
      await deps.client.workflow.getHandle(runId).signal(deliverSignal, { name, payload: req.body });
    } catch (error) {
      if (error instanceof WorkflowNotFoundError)
        throw new HttpError(409, "conflict", `run ${runId} is no longer running`);
      throw error;
    }
    res.status(202).json({ accepted: true });
  });

  return router;
}
