/**
 * The runs routes: start (type-check, transpile, start the workflow), read, list, cancel, and
 * the harness's part in a run's calls: decide parked calls, answer the input a call asks for.
 */
import { Router, type Request } from "express";
import type { ScriptChecker } from "../../declarations/index.ts";
import type { ToolsetRegistry } from "../../toolsets/index.ts";
import type { SecretBox } from "../../credentials/index.ts";
import { namespaceOf, principalOf } from "../auth.ts";
import { compileForToolset, scriptToRun } from "../script-compiler.ts";
import { checkServers } from "./credentials.ts";
import { HttpError, notFound } from "../http-error.ts";
import { RUN_ID_PATTERN, type CallDecision, type RunService } from "../run-service.ts";
import type { z } from "zod";
import {
  credentialsBody,
  decideCallBody,
  elicitationAnswerBody,
  forkRunBody,
  journalQuery,
  listRunsQuery,
  rejectCallBody,
  rollbackRunBody,
  signalName,
  startRunBody,
} from "../schemas.ts";
import { parseOrThrow } from "../validate.ts";

export interface RunsRouteDeps {
  runs: RunService;
  toolsets: ToolsetRegistry;
  typeChecker: ScriptChecker;
  box: SecretBox;
}

/** A run's input: at most 16 MiB of JSON (the body around it may be 1 MiB larger, see app.ts). */
export const MAX_INPUT_BYTES = 16 * 1024 * 1024;

/** Refuses an input larger than a run accepts, before anything is compiled or started. */
export function checkInputSize(input: unknown): void {
  if (input === undefined) return;
  const bytes = Buffer.byteLength(JSON.stringify(input) ?? "");
  if (bytes > MAX_INPUT_BYTES)
    throw new HttpError(
      413,
      "payloadTooLarge",
      `the run's input is ${bytes} bytes of JSON; a run accepts at most ${MAX_INPUT_BYTES} (16 MiB)`,
    );
}

function runIdParam(value: string | undefined): string {
  if (!value || !RUN_ID_PATTERN.test(value)) throw notFound(`run ${value ?? ""}`);
  return value;
}

export function createRunsRouter(deps: RunsRouteDeps): Router {
  const router = Router();

  router.post("/v1/runs", async function startRun(req, res) {
    const namespace = namespaceOf(req);
    const body = parseOrThrow(startRunBody, req.body, "body");
    checkInputSize(body.input);
    const { toolset, ...compiled } = await compileForToolset(deps, namespace, body.toolset, body.script);
    if (body.credentials) checkServers(body.credentials, toolset);
    const idempotencyKey = req.get("Idempotency-Key") || undefined;
    if (idempotencyKey && idempotencyKey.length > 200)
      throw new HttpError(400, "badRequest", "Idempotency-Key must be at most 200 characters");
    const started = await deps.runs.start({
      ...scriptToRun(toolset, compiled, req.get("traceparent")),
      input: body.input ?? null,
      namespace,
      ...(body.endUser ? { endUser: body.endUser } : {}),
      // The run's own credentials are sealed here: Temporal never holds them in clear.
      ...(body.credentials ? { credentials: deps.box.seal(JSON.stringify(body.credentials)) } : {}),
      ...(body.onFailure === "rollback" ? { onFailure: body.onFailure } : {}),
      // Absent unless asked: runs that do not ask start as they always did.
      ...(body.approveScript ? { approveScript: true } : {}),
      ...(idempotencyKey ? { idempotencyKey } : {}),
    });
    const view = started.view ?? (await deps.runs.get(started.id, namespace));
    res
      .status(started.created ? 201 : 200)
      .location(`/v1/runs/${started.id}`)
      .json(view);
  });

  router.get("/v1/runs", async function listRuns(req, res) {
    const { pageSize, pageToken, ...filters } = parseOrThrow(listRunsQuery, req.query, "query");
    res.json(await deps.runs.list(namespaceOf(req), { pageSize, pageToken }, filters));
  });

  router.get("/v1/runs/:id", async function getRun(req, res) {
    res.json(await deps.runs.get(runIdParam(req.params.id), namespaceOf(req)));
  });

  router.get("/v1/runs/:id/journal", async function getJournal(req, res) {
    const query = parseOrThrow(journalQuery, req.query, "query");
    res.json(
      await deps.runs.journal(runIdParam(req.params.id), namespaceOf(req), query.afterSeq, query.limit, query.maxBytes),
    );
  });

  const seqParam = (value: string | undefined): number => {
    const seq = Number(value);
    if (!Number.isInteger(seq) || seq < 1) throw new HttpError(404, "notFound", `call ${value ?? ""} was not found`);
    return seq;
  };

  /** Who decides: the key's principal, and on whose behalf when the body says (`by`). */
  const decider = (req: Request, by: string | undefined) => ({ principal: principalOf(req), ...(by ? { by } : {}) });

  /** A decision route: the schema of its body, and the decision a parsed body makes. */
  const decisionRoute = <S extends z.ZodType<{ by?: string | undefined }>>(
    verb: "approve" | "reject" | "resume",
    bodySchema: S,
    decisionOf: (body: z.infer<S>) => CallDecision,
  ) =>
    router.post(`/v1/runs/:id/calls/:seq/${verb}`, async function decideCall(req, res) {
      const body = parseOrThrow(bodySchema, req.body ?? {}, "body");
      res.json(
        await deps.runs.decide(runIdParam(req.params.id), namespaceOf(req), seqParam(req.params.seq), {
          ...decisionOf(body),
          ...decider(req, body.by),
        }),
      );
    });

  decisionRoute("approve", decideCallBody, () => ({ approve: true }));
  decisionRoute("reject", rejectCallBody, (body) => ({
    approve: false,
    ...(body.reason ? { reason: body.reason } : {}),
  }));
  decisionRoute("resume", decideCallBody, () => ({ resume: true }));

  router.post("/v1/runs/:id/calls/:seq/elicitation", async function answerElicitation(req, res) {
    const id = runIdParam(req.params.id);
    const seq = seqParam(req.params.seq);
    const answer = parseOrThrow(elicitationAnswerBody, req.body, "body");
    res.json(await deps.runs.answerInput(id, namespaceOf(req), seq, answer));
  });

  router.post("/v1/runs/:id/fork", async function forkRun(req, res) {
    const namespace = namespaceOf(req);
    const parentId = runIdParam(req.params.id);
    const body = parseOrThrow(forkRunBody, req.body, "body");
    checkInputSize(body.input);
    const source = await deps.runs.forkSource(parentId, namespace);
    const { toolset, ...compiled } = await compileForToolset(deps, namespace, source.toolsetId, body.script);
    if (body.credentials) checkServers(body.credentials, toolset);
    // Without new ones, the fork inherits the parent's as last renewed.
    const credentials = body.credentials
      ? deps.box.seal(JSON.stringify(body.credentials))
      : ((await deps.runs.currentCredentials(parentId)) ?? source.input.credentials);
    const started = await deps.runs.start({
      ...scriptToRun(toolset, compiled, req.get("traceparent")),
      input: body.input === undefined ? source.input.input : body.input,
      namespace,
      fork: source.seed,
      ...(source.endUser ? { endUser: source.endUser } : {}),
      ...(credentials ? { credentials } : {}),
    });
    if (body.parent === "cancel") await deps.runs.cancel(parentId, namespace);
    res
      .status(201)
      .location(`/v1/runs/${started.id}`)
      .json({ ...(started.view ?? (await deps.runs.get(started.id, namespace))), forkedFrom: parentId });
  });

  router.put("/v1/runs/:id/credentials", async function renewRunCredentials(req, res) {
    const namespace = namespaceOf(req);
    const id = runIdParam(req.params.id);
    const body = parseOrThrow(credentialsBody, req.body, "body");
    await deps.runs.renewCredentials(id, namespace, async (toolsetId) => {
      const toolset = await deps.toolsets.get(toolsetId, namespace);
      if (toolset) checkServers(body, toolset);
      // Sealed here like every other scope's: Temporal never holds them in clear.
      return deps.box.seal(JSON.stringify(body));
    });
    res.json({ runId: id, scope: "run" });
  });

  router.get("/v1/runs/:id/cassette", async function getCassette(req, res) {
    const id = runIdParam(req.params.id);
    res.setHeader("content-disposition", `attachment; filename="${id}.cassette.json"`);
    res.json(await deps.runs.cassette(id, namespaceOf(req)));
  });

  router.post("/v1/runs/:id/signals/:name", async function signalRun(req, res) {
    const id = runIdParam(req.params.id);
    const name = parseOrThrow(signalName, req.params.name, "path");
    await deps.runs.signal(id, namespaceOf(req), name, req.body === undefined ? null : (req.body as unknown));
    res.status(202).json({ accepted: true });
  });

  router.post("/v1/runs/:id/cancel", async function cancelRun(req, res) {
    res.json(await deps.runs.cancel(runIdParam(req.params.id), namespaceOf(req)));
  });

  router.post("/v1/runs/:id/rollback", async function rollbackRun(req, res) {
    const id = runIdParam(req.params.id);
    const body = parseOrThrow(rollbackRunBody, req.body ?? {}, "body");
    res.status(202).json(
      await deps.runs.rollback(id, namespaceOf(req), {
        principal: principalOf(req),
        by: body.by,
        reason: body.reason,
      }),
    );
  });

  return router;
}
