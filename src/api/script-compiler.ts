/**
 * The one way the API turns a script into something runnable: find the toolset (the caller's,
 * or the empty one), type-check the script against its declarations, strip the types, and keep
 * the input's declared type the stripping loses; then what a run of it starts with. A type error is a 422 whose message names the
 * first problem and whose details list them all. A check the pool abandoned (past its deadline
 * or memory cap) is a 422 `typeCheckTimedOut`; a namespace with too many checks waiting, a 503.
 */
import { compileScript, TypeCheckAbandonedError, TypeCheckQueueFullError } from "../declarations/index.ts";
import type { ScriptChecker } from "../declarations/index.ts";
import type { RunInput } from "../shared/index.ts";
import type { ResolvedToolset, ToolsetRegistry } from "../toolsets/index.ts";
import { HttpError, notFound } from "./http-error.ts";
import { newRunTrace } from "./run-trace.ts";

export interface CompiledForToolset {
  toolset: ResolvedToolset;
  javascript: string;
  scriptHash: string;
  /** The script's declared input type, as TypeScript text; absent when it declares none. */
  inputType?: string;
}

export async function compileForToolset(
  deps: { toolsets: ToolsetRegistry; typeChecker: ScriptChecker },
  namespace: string,
  toolsetId: string | undefined,
  source: string,
): Promise<CompiledForToolset> {
  const toolset = toolsetId ? await deps.toolsets.get(toolsetId, namespace) : deps.toolsets.empty;
  if (!toolset) throw notFound(`toolset ${toolsetId}`);
  const compiled = await compileScript(
    deps.typeChecker,
    source,
    { declarations: toolset.dts, declarationsKey: toolset.id },
    namespace,
  ).catch(rethrowTypeCheckRefusal);
  if (!compiled.ok) {
    const first = compiled.diagnostics[0];
    const where = first ? ` (line ${first.line}, column ${first.column}: ${first.message})` : "";
    throw new HttpError(422, "typeCheckFailed", `the script does not type-check${where}`, compiled.diagnostics);
  }
  const { javascript, scriptHash, inputType } = compiled;
  return inputType === undefined ? { toolset, javascript, scriptHash } : { toolset, javascript, scriptHash, inputType };
}

/** What every run starts from: the compiled script, its pinned toolset and the caller's trace (a `traceparent`). */
export function scriptToRun(
  toolset: ResolvedToolset,
  compiled: Omit<CompiledForToolset, "toolset">,
  traceparent: string | undefined,
): Pick<RunInput, "trace" | "script" | "scriptHash" | "inputType" | "toolsetId" | "toolset"> {
  return {
    trace: newRunTrace(traceparent),
    script: compiled.javascript,
    scriptHash: compiled.scriptHash,
    // Kept for saving the script (POST /v1/runs/{id}/save); the workflow never reads it.
    ...(compiled.inputType === undefined ? {} : { inputType: compiled.inputType }),
    toolsetId: toolset.id,
    toolset: toolset.document,
  };
}

/** The pool's refusals as the API's errors; anything else is thrown on as it is. */
export function rethrowTypeCheckRefusal(error: unknown): never {
  if (error instanceof TypeCheckAbandonedError)
    throw new HttpError(422, "typeCheckTimedOut", `${error.message}: simplify the script's types`, {
      reason: error.reason,
    });
  if (error instanceof TypeCheckQueueFullError) throw new HttpError(503, "unavailable", error.message);
  throw error;
}
