/**
 * The console's forms, posted: each turns what a form posted into the body of the API's route for
 * that decision and calls the route (route-call.ts), as the signed-in key. Success answers 303
 * back to the run's page (a fork's: the new run's), so reloading never posts again. A refusal —
 * the API's (its 400, 409, 422, 503 with its message) or the console's own reading of the form
 * (a result that is not JSON) — draws the run's page again with the message beside the form and
 * what was typed in the form kept, and answers the refusal's status. Secrets typed into a form
 * (a credential's value) are never drawn back.
 */
import { Router, type Request, type Response } from "express";
import { HttpError, notFound } from "../http-error.ts";
import { RUN_ID_PATTERN, type RunService } from "../run-service.ts";
import { CSRF_FIELD } from "./layout.ts";
import { FORM_FIELD, type FormOutcome } from "./decision-forms.ts";
import { contentOf } from "./elicitation-form.ts";
import { runPath } from "./links.ts";
import { runPageHtml, type createRunReader } from "./run-page.ts";
import type { RouteCall, RouteCaller } from "./route-call.ts";

/** Posted fields never drawn back into a form. */
const UNSHOWN = new Set([CSRF_FIELD, FORM_FIELD, "value"]);

type Posted = Record<string, unknown>;
type Built = RouteCall | { problem: string };

export interface ConsoleActionsDeps {
  runs: RunService;
  callRoute: RouteCaller;
  readRun: ReturnType<typeof createRunReader>;
}

const text = (posted: Posted, name: string): string | undefined => {
  const value = posted[name];
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
};

const reasonBody = (posted: Posted) => {
  const reason = text(posted, "reason")?.trim();
  return reason ? { reason } : {};
};

function parseJson(value: string, what: string): { value: unknown } | { problem: string } {
  try {
    return { value: JSON.parse(value) };
  } catch (error) {
    return { problem: `${what} is not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** The API's refusal in words: its message, then each problem or type error it lists. */
export function refusalText(error: HttpError): string {
  const details: unknown = error.details;
  const lines = [error.message];
  if (Array.isArray(details))
    for (const d of details as { line?: number; column?: number; message?: string }[])
      if (d.line !== undefined) lines.push(`line ${d.line}, column ${d.column ?? 0}: ${d.message ?? ""}`);
  const problems = (details as { problems?: { path: string; message: string }[] } | undefined)?.problems;
  if (Array.isArray(problems) && problems.length > 1) for (const p of problems) lines.push(`${p.path}: ${p.message}`);
  return lines.join("\n");
}

export function createConsoleActions(deps: ConsoleActionsDeps): Router {
  const router = Router();

  async function refuse(req: Request, res: Response, runId: string, status: number, outcome: FormOutcome) {
    const viewer = res.locals.viewer;
    if (!viewer) throw new Error("console session middleware did not run");
    const state = await deps.readRun(runId, viewer.namespace, 0);
    res
      .status(status)
      .type("html")
      .send(runPageHtml(state, viewer, outcome).text);
  }

  /** A form posted to `path` (below `/ui/runs/:id/`): `build` makes the API call, `then` says where to go after. */
  const action = (
    path: string,
    build: (posted: Posted, runId: string, req: Request) => Built | Promise<Built>,
    then: (runId: string, answer: unknown) => string = (runId) => runPath(runId),
  ) =>
    router.post(`/runs/:id/${path}`, async function consoleAction(req: Request<Record<string, string>>, res) {
      const runId = req.params["id"] ?? "";
      if (!RUN_ID_PATTERN.test(runId)) throw notFound(`run ${runId}`);
      const posted: Posted = typeof req.body === "object" && req.body !== null ? (req.body as Posted) : {};
      const values = Object.fromEntries(
        Object.entries(posted).filter(([name, value]) => !UNSHOWN.has(name) && typeof value === "string"),
      ) as Record<string, string>;
      const form = text(posted, FORM_FIELD) ?? path;
      try {
        const built = await build(posted, runId, req);
        if ("problem" in built) return await refuse(req, res, runId, 422, { form, message: built.problem, values });
        const answer = await deps.callRoute(req, built);
        res.redirect(303, then(runId, answer.body));
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
        if (error.status === 404 && error.message === `run ${runId} was not found`) throw error;
        await refuse(req, res, runId, error.status, { form, message: refusalText(error), values });
      }
    });

  const v1 = (runId: string) => `/v1/runs/${runId}`;
  const post = (path: string, body: unknown): RouteCall => ({ method: "POST", path, body });
  const seqOf = (req: Request): string => String((req.params as Record<string, string>)["seq"] ?? "");

  action("calls/:seq/approve", (_p, id, req) => post(`${v1(id)}/calls/${seqOf(req)}/approve`, {}));
  action("calls/:seq/reject", (p, id, req) => post(`${v1(id)}/calls/${seqOf(req)}/reject`, reasonBody(p)));
  action("calls/:seq/resume", (_p, id, req) => post(`${v1(id)}/calls/${seqOf(req)}/resume`, {}));
  action("calls/:seq/retry", (_p, id, req) => post(`${v1(id)}/calls/${seqOf(req)}/retry`, {}));
  action("calls/:seq/fail", (p, id, req) => post(`${v1(id)}/calls/${seqOf(req)}/fail`, reasonBody(p)));
  action("calls/:seq/resolve", (p, id, req) => {
    const result = parseJson(text(p, "result") ?? "", "the result");
    return "problem" in result ? result : post(`${v1(id)}/calls/${seqOf(req)}/resolve`, { result: result.value });
  });
  action("calls/:seq/elicitation", async (p, id, req) => {
    const path = `${v1(id)}/calls/${seqOf(req)}/elicitation`;
    const answer = text(p, "action") ?? "accept";
    if (answer !== "accept") return post(path, { action: answer });
    // The schema the question asked for, from the run's parked call: the form is read by it.
    const view = await deps.runs.get(id, req.namespace ?? "");
    const parked = view.parked?.find((call) => String(call.seq) === seqOf(req)) as
      { details?: Record<string, unknown> } | undefined;
    const content = contentOf(parked?.details?.["requestedSchema"], p);
    return "problem" in content ? content : post(path, { action: "accept", content: content.content });
  });
  action("approve", (_p, id) => post(`${v1(id)}/approve`, {}));
  action("reject", (p, id) => post(`${v1(id)}/reject`, reasonBody(p)));
  action("cancel", (_p, id) => post(`${v1(id)}/cancel`, {}));
  action("rollback", (p, id) => post(`${v1(id)}/rollback`, reasonBody(p)));
  action("credentials", (p, id) => {
    const server = text(p, "server")?.trim() ?? "";
    const header = text(p, "header")?.trim() ?? "";
    const value = typeof p["value"] === "string" ? p["value"] : "";
    const body = { mcpServers: { [server]: { headers: { [header]: value } } } };
    return { method: "PUT", path: `${v1(id)}/credentials`, body };
  });
  action(
    "fork",
    (p, id) => {
      const inputText = text(p, "input");
      const input = inputText === undefined ? undefined : parseJson(inputText, "the input");
      if (input && "problem" in input) return input;
      return post(`${v1(id)}/fork`, {
        // Browsers send a textarea's lines ended with CRLF.
        script: typeof p["script"] === "string" ? p["script"].replace(/\r\n/g, "\n") : "",
        ...(input ? { input: input.value } : {}),
        ...(p["parent"] === "cancel" ? { parent: "cancel" } : {}),
      });
    },
    (id, answer) => {
      const forked = (answer as { id?: unknown } | undefined)?.id;
      return typeof forked === "string" && RUN_ID_PATTERN.test(forked) ? runPath(forked) : runPath(id);
    },
  );

  return router;
}
