/**
 * `POST /v1/runs/{id}/save {name, description?, toolset?}`: a run's script becomes a stored script
 * (a workflow toolsets pin by name), as `POST /v1/workflows` would store it, pinned to the run's
 * toolset or to the one the body names. The run may be running or ended, continued as new or not:
 * its script, declared input type and toolset are read from its start, the tools it called from
 * its journal. Saving against another toolset is refused when the script does not type-check
 * against it (422 `typeCheckFailed`) or the toolset lacks a tool the run called (422 `toolsMissing`).
 */
import { Router } from "express";
import { z } from "zod";
import type { ScriptChecker } from "../../declarations/index.ts";
import { storedScriptId, type StoredScriptStore } from "../../storage/index.ts";
import type { ToolsetRegistry } from "../../toolsets/index.ts";
import { namespaceOf } from "../auth.ts";
import { HttpError, notFound } from "../http-error.ts";
import { RUN_ID_PATTERN, type RunService } from "../run-service.ts";
import { diagnosticsAgainstOther, toolsLacked } from "../saved-script-checks.ts";
import { rethrowTypeCheckRefusal } from "../script-compiler.ts";
import { parseOrThrow } from "../validate.ts";
import { workflowName, workflowToolset } from "./workflows.ts";

export interface RunSaveRouteDeps {
  runs: RunService;
  toolsets: ToolsetRegistry;
  typeChecker: ScriptChecker;
  storedScripts: StoredScriptStore;
}

export const saveRunBody = z.strictObject({
  name: workflowName,
  description: z.string().min(1).max(2000).optional(),
  toolset: workflowToolset
    .optional()
    .describe("Pin the stored script to this toolset instead of the run's; the script must fit it"),
});

export function createRunSaveRouter(deps: RunSaveRouteDeps): Router {
  const router = Router();

  router.post("/v1/runs/:id/save", async function saveRunScript(req, res) {
    const namespace = namespaceOf(req);
    const runId = req.params.id ?? "";
    if (!RUN_ID_PATTERN.test(runId)) throw notFound(`run ${runId}`);
    const body = parseOrThrow(saveRunBody, req.body ?? {}, "body");
    const { input, called } = await deps.runs.scriptSource(runId, namespace);
    const toolset = await deps.toolsets.get(body.toolset ?? input.toolsetId, namespace);
    if (!toolset) throw notFound(`toolset ${body.toolset ?? input.toolsetId}`);
    if (toolset.id !== input.toolsetId) {
      const own = await deps.toolsets.get(input.toolsetId, namespace);
      if (!own) throw notFound(`toolset ${input.toolsetId}`);
      const diagnostics = await diagnosticsAgainstOther(deps.typeChecker, input.script, own, toolset, namespace).catch(
        rethrowTypeCheckRefusal,
      );
      const first = diagnostics[0];
      if (first)
        throw new HttpError(
          422,
          "typeCheckFailed",
          `the run's script does not type-check against toolset ${toolset.id} (line ${first.line}, column ${first.column}: ${first.message})`,
          diagnostics,
        );
    }
    const lacked = toolsLacked(toolset.document, called);
    if (lacked.length > 0)
      throw new HttpError(
        422,
        "toolsMissing",
        `toolset ${toolset.id} lacks what run ${runId} called: ${lacked.join(", ")}`,
        { toolset: toolset.id, tools: lacked },
      );
    const id = storedScriptId(body.name, input.scriptHash, toolset.id, {
      description: body.description,
      inputType: input.inputType,
    });
    const created = await deps.storedScripts.save(namespace, id, {
      id,
      name: body.name,
      ...(body.description === undefined ? {} : { description: body.description }),
      script: input.script,
      ...(input.inputType === undefined ? {} : { inputType: input.inputType }),
      scriptHash: input.scriptHash,
      toolsetId: toolset.id,
      toolset: toolset.document,
    });
    res
      .status(created ? 201 : 200)
      .location(`/v1/workflows/${id}`)
      .json({
        id,
        name: body.name,
        toolset: toolset.id,
        ...(body.description === undefined ? {} : { description: body.description }),
      });
  });

  return router;
}
