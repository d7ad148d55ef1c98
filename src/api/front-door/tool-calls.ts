/**
 * What each of the four tools does, for one session's scope. They are thin: `search_tools` is the
 * toolset's ranker, `describe_tools` its prompt rendering of chosen tools, `run_script` the API's
 * own start (the same type-check pool, the same start as `POST /v1/runs`) followed by a bounded
 * wait for the run, and `get_run` that wait alone. Anything the model can fix (its arguments, a
 * type error, a failed run) is a tool error it reads; only a call no tool answer fits (an unknown
 * tool, a task asked of a tool that is not one) is refused at the protocol level.
 */
import type { z } from "zod";
import type { ScriptChecker } from "../../declarations/index.ts";
import { renderDeclarations, searchTools, unknownToolNames, type ToolsetRegistry } from "../../toolsets/index.ts";
import { HttpError } from "../http-error.ts";
import { checkInputSize } from "../routes/runs.ts";
import type { RunService, RunView } from "../run-service.ts";
import { compileForToolset, scriptToRun } from "../script-compiler.ts";
import { followRun } from "./follow-run.ts";
import {
  ProtocolRefusal,
  type CallContext,
  type FrontDoorScope,
  type SessionHandlers,
  type ToolAnswer,
} from "./front-door-types.ts";
import { describeToolsArgs, getRunArgs, runScriptArgs, searchToolsArgs } from "./front-door-tools.ts";
import { answerFor, runAnswer, taskOf } from "./run-answers.ts";

export interface FrontDoorDeps {
  runs: RunService;
  toolsets: ToolsetRegistry;
  typeChecker: ScriptChecker;
  /** How long `run_script` and `get_run` wait for a run to end before they answer its state. */
  waitMs: number;
}

const TOOL_NAMES = new Set(["search_tools", "describe_tools", "run_script", "get_run"]);

/** The arguments as `schema` reads them, or a refusal naming each problem. */
function parseArgs<S extends z.ZodType>(tool: string, schema: S, args: unknown): z.infer<S> {
  const parsed = schema.safeParse(args ?? {});
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(arguments)"}: ${issue.message}`);
  throw new HttpError(400, "badRequest", `invalid arguments of ${tool}: ${problems.join("; ")}`);
}

/** An API error as the model reads it: its message, and for a type error every position tsc gave. */
function errorAnswer(error: HttpError): ToolAnswer {
  const diagnostics =
    error.code === "typeCheckFailed" && Array.isArray(error.details)
      ? (error.details as { line: number; column: number; message: string }[])
      : [];
  const lines = diagnostics.slice(0, 20).map((d) => `line ${d.line}, column ${d.column}: ${d.message}`);
  return {
    isError: true,
    text: [error.message, ...lines].join("\n"),
    structured: { error: { code: error.code, message: error.message, ...(lines.length ? { diagnostics } : {}) } },
  };
}

export function createToolCalls(
  deps: FrontDoorDeps,
  scope: FrontDoorScope,
): Pick<SessionHandlers, "callTool" | "startTask"> {
  const { runs } = deps;

  /** Type-checks and starts a run of the script, as `POST /v1/runs` does. */
  async function start(args: unknown, context: CallContext): Promise<RunView> {
    const body = parseArgs("run_script", runScriptArgs, args);
    checkInputSize(body.input);
    const { toolset, ...compiled } = await compileForToolset(deps, scope.namespace, scope.toolset.id, body.script);
    const started = await runs.start({
      ...scriptToRun(toolset, compiled, context.traceparent),
      input: body.input ?? null,
      namespace: scope.namespace,
      ...(scope.endUser ? { endUser: scope.endUser } : {}),
    });
    return started.view ?? (await runs.get(started.id, scope.namespace));
  }

  /** Waits (bounded) for the run, asking the client's user what they can decide, then answers it. */
  async function answerRun(runId: string, context: CallContext): Promise<ToolAnswer> {
    const view = await followRun(runs, scope, runId, {
      deadline: Date.now() + deps.waitMs,
      ask: context.ask,
      signal: context.signal,
      progress: context.progress,
    });
    if (!view) return { isError: true, text: `No run ${runId} in this toolset.` };
    return answerFor(runs, scope.namespace, view);
  }

  async function call(name: string, args: unknown, context: CallContext): Promise<ToolAnswer> {
    switch (name) {
      case "search_tools": {
        const { query, limit } = parseArgs(name, searchToolsArgs, args);
        const found = searchTools(scope.toolset, query, limit ?? 10);
        return found.length > 0
          ? { text: found.map((tool) => tool.line).join("\n") }
          : { text: `No tool matches "${query}". Try other words: a verb, the thing it acts on, a service.` };
      }
      case "describe_tools": {
        const { names } = parseArgs(name, describeToolsArgs, args);
        const unknown = unknownToolNames(scope.toolset.document, names);
        if (unknown.length > 0)
          return { isError: true, text: `No tool ${unknown.join(", ")} in this toolset; search_tools finds names.` };
        return { text: renderDeclarations(scope.toolset, { format: "prompt", tools: names }) };
      }
      case "run_script": {
        const started = await start(args, context);
        // Once started, the run goes on whatever happens here: the model gets its id at least.
        return answerRun(started.id, context).catch((error: unknown) => {
          if (context.signal.aborted) throw error;
          return runAnswer(started);
        });
      }
      case "get_run":
        return answerRun(parseArgs(name, getRunArgs, args).runId, context);
      default:
        throw new ProtocolRefusal("invalidParams", `Tool ${name} not found`);
    }
  }

  return {
    async callTool(name, args, context) {
      try {
        return await call(name, args, context);
      } catch (error) {
        if (error instanceof HttpError) return errorAnswer(error);
        throw error;
      }
    },

    async startTask(name, args, context) {
      if (name !== "run_script")
        throw TOOL_NAMES.has(name)
          ? new ProtocolRefusal("methodNotFound", `${name} is not called as a task; call it without one`)
          : new ProtocolRefusal("invalidParams", `Tool ${name} not found`);
      try {
        const view = await start(args, context);
        return { task: taskOf(view), note: `Run ${view.id} started; its task ends with the run.` };
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
        const answer = errorAnswer(error);
        throw new ProtocolRefusal("invalidParams", answer.text, answer.structured);
      }
    },
  };
}
