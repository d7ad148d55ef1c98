/**
 * The toolsets routes: register (pin the servers' tools under a content address, and say which
 * tools were left out), read the pinned document, and render the declarations a model is shown.
 */
import { Router } from "express";
import { z } from "zod";
import { withScriptGuide } from "../../declarations/index.ts";
import { RegistrationError } from "../../toolsets/index.ts";
import { registerToolsetBody, TOOLSET_ID_PATTERN } from "../../contract/index.ts";
import type { ResolvedToolset, ToolsetRegistry } from "../../toolsets/index.ts";
import { namespaceOf } from "../auth.ts";
import type { RegisteredToolsetView } from "../../contract/index.ts";
import type { CredentialWriter } from "./credentials.ts";
import { HttpError, notFound } from "../http-error.ts";
import { parseOrThrow } from "../validate.ts";

export interface ToolsetsRouteDeps {
  toolsets: ToolsetRegistry;
  credentialWriter: CredentialWriter;
}

export const declarationsQuery = z
  .strictObject({
    format: z
      .enum(["dts", "prompt"])
      .default("dts")
      .describe("dts: the .d.ts the type-checker reads; prompt: the compact text a model reads"),
    guide: z
      .enum(["true", "false"])
      .default("false")
      .describe("With format=prompt: begin with the short guide to writing a Rewind script"),
  })
  .refine((query) => query.guide === "false" || query.format === "prompt", {
    path: ["guide"],
    message: "guide goes with format=prompt",
  });

function view(toolset: ResolvedToolset) {
  return { id: toolset.id, document: toolset.document };
}

export function createToolsetsRouter(deps: ToolsetsRouteDeps): Router {
  const router = Router();

  async function find(id: string | undefined, namespace: string): Promise<ResolvedToolset> {
    if (!id || !TOOLSET_ID_PATTERN.test(id)) throw notFound(`toolset ${id ?? ""}`);
    const toolset = await deps.toolsets.get(id, namespace);
    if (!toolset) throw notFound(`toolset ${id}`);
    return toolset;
  }

  router.post("/v1/toolsets", async function registerToolset(req, res) {
    const body = parseOrThrow(registerToolsetBody, req.body, "body");
    try {
      const { toolset, created, omittedTools } = await deps.toolsets.register(namespaceOf(req), body);
      if (body.credentials)
        await deps.credentialWriter.write(namespaceOf(req), toolset.id, undefined, body.credentials);
      res
        .status(created ? 201 : 200)
        .location(`/v1/toolsets/${toolset.id}`)
        .json({ ...view(toolset), omittedTools } satisfies RegisteredToolsetView);
    } catch (error) {
      if (!(error instanceof RegistrationError)) throw error;
      if (error.status === 422) throw new HttpError(422, "toolsetRejected", error.message, error.details);
      if (error.status === 404) throw new HttpError(404, "notFound", error.message, error.details);
      throw new HttpError(error.status, "badRequest", error.message, error.details);
    }
  });

  router.get("/v1/toolsets/:id", async function getToolset(req, res) {
    res.json(view(await find(req.params.id, namespaceOf(req))));
  });

  router.get("/v1/toolsets/:id/declarations", async function getDeclarations(req, res) {
    const { format, guide } = parseOrThrow(declarationsQuery, req.query, "query");
    const toolset = await find(req.params.id, namespaceOf(req));
    const prompt = guide === "true" ? withScriptGuide(toolset.prompt) : toolset.prompt;
    res.type("text/plain; charset=utf-8").send(format === "dts" ? toolset.dts : prompt);
  });

  return router;
}
