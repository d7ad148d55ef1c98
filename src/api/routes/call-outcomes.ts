/**
 * Deciding a call parked on an unknown outcome (an `at_most_once` call under `onUnknown: "park"`
 * whose attempt ended without an answer): `resolve` gives the script a result the harness found
 * out (it must fit the tool's output schema, checked here: the workflow's update validator stays
 * cheap), `retry` sends the call again with the same key, `fail` gives the script
 * ToolError(outcomeUnknown). 404 for a call the run never made, 409 for one not parked so.
 */
import { Router, type Request } from "express";
import type { JsonSchema, PinnedToolset } from "../../shared/index.ts";
import { validateAgainstSchema } from "../../schemas/index.ts";
import type { ToolsetRegistry } from "../../toolsets/index.ts";
import { namespaceOf, principalOf } from "../auth.ts";
import { HttpError, notFound } from "../http-error.ts";
import { RUN_ID_PATTERN, type CallDecision, type RunService } from "../run-service.ts";
import { decideCallBody, failCallBody, resolveCallBody } from "../schemas.ts";
import { parseOrThrow } from "../validate.ts";

export interface CallOutcomesRouteDeps {
  runs: RunService;
  toolsets: ToolsetRegistry;
}

/** The output schema the toolset pinned for `tool` (`group.tool`), if it has one. */
export function outputSchemaOf(toolset: PinnedToolset, tool: string): JsonSchema | undefined {
  const dot = tool.indexOf(".");
  const group = tool.slice(0, dot);
  const name = tool.slice(dot + 1);
  const tools = toolset.mcpServers[group]?.tools ?? toolset.hostTools[group]?.tools ?? [];
  return tools.find((t) => t.name === name)?.outputSchema;
}

export function createCallOutcomesRouter(deps: CallOutcomesRouteDeps): Router {
  const router = Router();

  /** The call, once it is known to be parked on an unknown outcome. */
  async function waiting(
    req: Request<{ id: string; seq: string }>,
  ): Promise<{ runId: string; seq: number; tool: string; toolsetId: string }> {
    const runId = req.params.id;
    if (!RUN_ID_PATTERN.test(runId)) throw notFound(`run ${runId}`);
    const seq = Number(req.params.seq);
    if (!Number.isInteger(seq) || seq < 1) throw notFound(`call ${req.params.seq}`);
    const call = await deps.runs.callWaiting(runId, namespaceOf(req), seq);
    if (call.parked?.reason !== "outcomeUnknown")
      throw new HttpError(
        409,
        "conflict",
        `call ${seq} of run ${runId} is not parked on an unknown outcome${call.parked ? ` (it waits for ${call.parked.reason})` : ""}`,
      );
    return { runId, seq, tool: call.parked.tool, toolsetId: call.toolsetId };
  }

  async function decide(
    req: Request<{ id: string; seq: string }>,
    call: { runId: string; seq: number },
    decision: CallDecision,
    by?: string,
  ) {
    return deps.runs.decide(call.runId, namespaceOf(req), call.seq, {
      ...decision,
      principal: principalOf(req),
      ...(by ? { by } : {}),
    });
  }

  router.post("/v1/runs/:id/calls/:seq/resolve", async function resolveCall(req, res) {
    const body = parseOrThrow(resolveCallBody, req.body ?? {}, "body");
    const call = await waiting(req);
    const toolset = await deps.toolsets.get(call.toolsetId, namespaceOf(req));
    if (!toolset) throw notFound(`toolset ${call.toolsetId}`);
    const schema = outputSchemaOf(toolset.document, call.tool);
    const problem = schema === undefined ? undefined : validateAgainstSchema(schema, body.result);
    if (problem)
      throw new HttpError(
        422,
        "invalidAnswer",
        `the result does not fit the output schema of ${call.tool}: ${problem.message.replaceAll(/(^|; )arguments/g, "$1result")}`,
        problem.details,
      );
    res.json(await decide(req, call, { resolve: { result: body.result ?? null } }, body.by));
  });

  router.post("/v1/runs/:id/calls/:seq/retry", async function retryCall(req, res) {
    const body = parseOrThrow(decideCallBody, req.body ?? {}, "body");
    res.json(await decide(req, await waiting(req), { retry: true }, body.by));
  });

  router.post("/v1/runs/:id/calls/:seq/fail", async function failCall(req, res) {
    const body = parseOrThrow(failCallBody, req.body ?? {}, "body");
    const decision: CallDecision = { fail: true, ...(body.reason ? { reason: body.reason } : {}) };
    res.json(await decide(req, await waiting(req), decision, body.by));
  });

  return router;
}
