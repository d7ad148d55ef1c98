/**
 * Turns a script as written into what the sandbox runs: type-check against the toolset's
 * declarations, then strip the types. Node's type stripper replaces types with blanks, so every
 * line and column in the sandbox's stack traces is the script author's own. Stripping loses the
 * input's declared type, so it is answered beside the JavaScript, as the type-check read it.
 */
import { createHash } from "node:crypto";
import { stripTypeScriptTypes } from "node:module";
import type { Diagnostic, ScriptInspection, TypeCheckInput } from "./type-check.ts";
import { SCRIPT_FILE } from "./type-check.ts";

export type CompileResult =
  | {
      ok: true;
      javascript: string;
      scriptHash: string;
      /** The declared type of the input, as TypeScript text (see input-type.ts); absent when undeclared. */
      inputType?: string;
    }
  | { ok: false; diagnostics: Diagnostic[] };

export const MAX_SCRIPT_BYTES = 512 * 1024;

/** A checker in this thread (type-check.ts) or on the pool's threads (type-check-pool.ts). */
interface Inspector {
  inspect(input: TypeCheckInput, namespace?: string): ScriptInspection | Promise<ScriptInspection>;
}

/** `namespace`: whose queue the check waits in, on the pool. */
export async function compileScript(
  checker: Inspector,
  source: string,
  toolset: { declarations: string; declarationsKey: string },
  namespace?: string,
): Promise<CompileResult> {
  const { diagnostics, inputType } = await checker.inspect({ source, ...toolset }, namespace);
  if (diagnostics.length > 0) return { ok: false, diagnostics };
  let javascript: string;
  try {
    javascript = stripTypeScriptTypes(source, { mode: "strip" });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, diagnostics: [{ file: SCRIPT_FILE, line: 1, column: 1, message, code: 0 }] };
  }
  const scriptHash = createHash("sha256").update(source).digest("hex");
  return inputType === undefined
    ? { ok: true, javascript, scriptHash }
    : { ok: true, javascript, scriptHash, inputType };
}
