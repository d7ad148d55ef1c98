/**
 * `POST /v1/runs/{id}/approve` and `…/reject`: the harness's decision on the script of a run that
 * waits for it before its first step (the run option `approveScript`, or the toolset's
 * `scriptApproval: "required"`). Approving lets the first step run; rejecting ends the run failed
 * with ScriptRejected, its script never run. 409 when the run does not wait for that.
 */
import { Router } from "express";
import { namespaceOf, principalOf } from "../auth.ts";
import { notFound } from "../http-error.ts";
import { RUN_ID_PATTERN, type RunService } from "../run-service.ts";
import { decideCallBody, rejectCallBody } from "../schemas.ts";
import { parseOrThrow } from "../validate.ts";

export function createScriptApprovalRouter(deps: { runs: RunService }): Router {
  const router = Router();

  router.post("/v1/runs/:id/approve", async function approveScript(req, res) {
    const body = parseOrThrow(decideCallBody, req.body ?? {}, "body");
    if (!RUN_ID_PATTERN.test(req.params.id)) throw notFound(`run ${req.params.id}`);
    res.json(
      await deps.runs.decideScript(req.params.id, namespaceOf(req), {
        approve: true,
        principal: principalOf(req),
        by: body.by,
      }),
    );
  });

  router.post("/v1/runs/:id/reject", async function rejectScript(req, res) {
    const body = parseOrThrow(rejectCallBody, req.body ?? {}, "body");
    if (!RUN_ID_PATTERN.test(req.params.id)) throw notFound(`run ${req.params.id}`);
    res.json(
      await deps.runs.decideScript(req.params.id, namespaceOf(req), {
        approve: false,
        reason: body.reason,
        principal: principalOf(req),
        by: body.by,
      }),
    );
  });

  return router;
}
