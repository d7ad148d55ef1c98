/**
 * Stored scripts (the API calls them workflows): `POST /v1/workflows {name, script, toolset?}` type-checks the script
 * against its toolset and stores it, with its declared input type, under a content-addressed id
 * (`wf_…`) that toolsets pin by name; `GET /v1/workflows/{id}` reads it back.
 */
import { Router } from "express";
import { z } from "zod";
import { MAX_SCRIPT_BYTES } from "../../declarations/index.ts";
import type { ScriptChecker } from "../../declarations/index.ts";
import { TOOLSET_ID_PATTERN } from "../../contract/index.ts";
import type { ToolsetRegistry } from "../../toolsets/index.ts";
import { STORED_SCRIPT_ID_PATTERN, storedScriptId, type StoredScriptStore } from "../../storage/index.ts";
import { namespaceOf } from "../auth.ts";
import { compileForToolset } from "../script-compiler.ts";
import { notFound } from "../http-error.ts";
import { parseOrThrow } from "../validate.ts";

export interface WorkflowsRouteDeps {
  toolsets: ToolsetRegistry;
  typeChecker: ScriptChecker;
  storedScripts: StoredScriptStore;
}

/** The name scripts call a stored script by (`workflows.<name>`); saving a run's script checks it the same way. */
export const workflowName = z
  .string()
  .regex(/^[A-Za-z_$][A-Za-z0-9_$]*$/, "name must be a JavaScript identifier (scripts call workflows.<name>)")
  .max(64);

export const workflowToolset = z.string().regex(TOOLSET_ID_PATTERN, "toolset must be a toolset id");

export const storeWorkflowBody = z.strictObject({
  name: workflowName,
  script: z.string().min(1).max(MAX_SCRIPT_BYTES),
  toolset: workflowToolset.optional(),
});

export function createWorkflowsRouter(deps: WorkflowsRouteDeps): Router {
  const router = Router();

  router.post("/v1/workflows", async function storeWorkflow(req, res) {
    const namespace = namespaceOf(req);
    const body = parseOrThrow(storeWorkflowBody, req.body, "body");
    const { toolset, ...compiled } = await compileForToolset(deps, namespace, body.toolset, body.script);
    const id = storedScriptId(body.name, compiled.scriptHash, toolset.id, { inputType: compiled.inputType });
    const created = await deps.storedScripts.save(namespace, id, {
      id,
      name: body.name,
      script: compiled.javascript,
      ...(compiled.inputType === undefined ? {} : { inputType: compiled.inputType }),
      scriptHash: compiled.scriptHash,
      toolsetId: toolset.id,
      toolset: toolset.document,
    });
    res.status(created ? 201 : 200).json({ id, name: body.name, toolset: toolset.id });
  });

  router.get("/v1/workflows/:id", async function getWorkflow(req, res) {
    const id = req.params.id ?? "";
    const stored = STORED_SCRIPT_ID_PATTERN.test(id) ? await deps.storedScripts.load(namespaceOf(req), id) : undefined;
    if (!stored) throw notFound(`workflow ${id}`);
    res.json({
      id: stored.id,
      name: stored.name,
      toolset: stored.toolsetId,
      scriptHash: stored.scriptHash,
      ...(stored.description === undefined ? {} : { description: stored.description }),
      ...(stored.inputType === undefined ? {} : { inputType: stored.inputType }),
    });
  });

  return router;
}
