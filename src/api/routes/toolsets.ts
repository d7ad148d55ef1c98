/**
 * The toolsets routes: register (pin the servers' tools under a content address, and say which
 * tools were left out), read the pinned document, render the declarations a model is shown (in
 * full, compact, or for chosen tools), and find the tools that match a few words.
 */
import { Router } from "express";
import { z } from "zod";
import { withScriptGuide } from "../../declarations/index.ts";
import { RegistrationError, renderDeclarations, searchTools, unknownToolNames } from "../../toolsets/index.ts";
import { registerToolsetBody, TOOLSET_ID_PATTERN } from "../../contract/index.ts";
import type { ResolvedToolset, ToolsetRegistry } from "../../toolsets/index.ts";
import { namespaceOf } from "../auth.ts";
import type { RegisteredToolsetView, ToolSearchBody } from "../../contract/index.ts";
import type { CredentialWriter } from "./credentials.ts";
import { HttpError, notFound } from "../http-error.ts";
import { parseOrThrow } from "../validate.ts";
import { groupNameProblem } from "../../shared/index.ts";

/**
 * A group named `__proto__`: JSON.parse makes it a key, which the body's schema never sees (a
 * record drops it), so without this the toolset would be registered without it.
 */
function refuseProtoGroups(body: unknown): void {
  if (typeof body !== "object" || body === null) return;
  for (const kind of ["mcpServers", "hostTools", "workflows"]) {
    const groups: unknown = Object.getOwnPropertyDescriptor(body, kind)?.value;
    if (typeof groups === "object" && groups !== null && Object.hasOwn(groups, "__proto__")) {
      const message = groupNameProblem("__proto__") ?? "";
      throw new HttpError(400, "badRequest", `invalid request body: ${kind}.__proto__: ${message}`, {
        problems: [{ path: `${kind}.__proto__`, message }],
      });
    }
  }
}

export interface ToolsetsRouteDeps {
  toolsets: ToolsetRegistry;
  credentialWriter: CredentialWriter;
}

const flag = (description: string) => z.enum(["true", "false"]).default("false").describe(description);

/** At most this many names in `?tools=`: a selection, not the whole toolset. */
const MAX_SELECTED_TOOLS = 200;

export const declarationsQuery = z
  .strictObject({
    format: z
      .enum(["dts", "prompt"])
      .default("dts")
      .describe("dts: the .d.ts the type-checker reads; prompt: the text a model reads (descriptions whole)"),
    guide: flag("With format=prompt: begin with the short guide to writing a Rewind script"),
    compact: flag("With format=prompt: one line per tool (qualified name and first sentence), no types"),
    tools: z
      .string()
      .max(20_000)
      .optional()
      .describe("Comma-separated qualified names (`group.tool`): render only these tools, and the built-ins"),
  })
  .refine((query) => query.guide === "false" || query.format === "prompt", {
    path: ["guide"],
    message: "guide goes with format=prompt",
  })
  .refine((query) => query.compact === "false" || query.format === "prompt", {
    path: ["compact"],
    message: "compact goes with format=prompt",
  })
  .refine((query) => query.compact === "false" || query.tools === undefined, {
    path: ["tools"],
    message: "tools and compact go one at a time (compact lists every tool)",
  })
  .refine((query) => query.tools === undefined || toolNames(query.tools).length > 0, {
    path: ["tools"],
    message: "tools must name at least one tool, e.g. tools=github.list_issues",
  })
  .refine((query) => query.tools === undefined || toolNames(query.tools).length <= MAX_SELECTED_TOOLS, {
    path: ["tools"],
    message: `tools names at most ${MAX_SELECTED_TOOLS} tools`,
  });

export const toolSearchQuery = z.strictObject({
  query: z.string().trim().min(1).max(500).describe("A few words: what the tool should do, or part of its name"),
  limit: z.coerce.number().int().min(1).max(100).default(10).describe("How many tools at most"),
});

function toolNames(list: string): string[] {
  return list
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
}

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
    refuseProtoGroups(req.body);
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
    const query = parseOrThrow(declarationsQuery, req.query, "query");
    const toolset = await find(req.params.id, namespaceOf(req));
    const tools = query.tools === undefined ? undefined : toolNames(query.tools);
    const unknown = tools ? unknownToolNames(toolset.document, tools) : [];
    if (unknown.length > 0)
      throw new HttpError(400, "badRequest", `tools: no tool ${unknown.join(", ")} in toolset ${toolset.id}`, {
        unknownTools: unknown,
      });
    const text = renderDeclarations(toolset, { format: query.format, compact: query.compact === "true", tools });
    res.type("text/plain; charset=utf-8").send(query.guide === "true" ? withScriptGuide(text) : text);
  });

  router.get("/v1/toolsets/:id/tools", async function searchToolset(req, res) {
    const { query, limit } = parseOrThrow(toolSearchQuery, req.query, "query");
    const toolset = await find(req.params.id, namespaceOf(req));
    res.json({ tools: searchTools(toolset, query, limit) } satisfies ToolSearchBody);
  });

  return router;
}
