/**
 * Type-checks a script against a toolset's declarations with the TypeScript compiler API, in
 * memory. The lib files and each toolset's parsed declarations are kept across checks, and the
 * previous program is handed to the next one, so a warm check only parses and checks the script.
 * A check is a pure function of the script and the declarations, so its answer is remembered:
 * a harness that starts the same script with new inputs pays for the check once. A script that
 * passes also answers its declared input type, read from the same program (see input-type.ts).
 */
import { createHash } from "node:crypto";
import path from "node:path";
import ts from "typescript";
import { declaredInputType } from "./input-type.ts";
import { applyScriptRules } from "./script-rules.ts";

export interface Diagnostic {
  file: string;
  line: number;
  column: number;
  message: string;
  code: number;
}

export interface TypeCheckInput {
  source: string;
  /** The `declare module "rewind:tools"` text of the run's toolset. */
  declarations: string;
  /** Identifies `declarations` (the toolset id) so its parse is reused. */
  declarationsKey: string;
}

export const SCRIPT_FILE = "script.ts";
const DECLARATIONS_FILE = "rewind-tools.d.ts";
const GLOBALS_FILE = "rewind-globals.d.ts";

/** What the sandbox provides besides the ES library: a console that writes to the run's log. */
const GLOBALS = `declare var console: {
  log(...data: unknown[]): void; info(...data: unknown[]): void; debug(...data: unknown[]): void;
  warn(...data: unknown[]): void; error(...data: unknown[]): void;
};
`;

const OPTIONS: ts.CompilerOptions = {
  strict: true,
  target: ts.ScriptTarget.ES2023,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ["lib.es2023.d.ts"],
  types: [],
  noEmit: true,
  isolatedModules: true,
  erasableSyntaxOnly: true,
  skipLibCheck: true,
  noFallthroughCasesInSwitch: true,
};

const LIB_DIR = path.dirname(ts.getDefaultLibFilePath(OPTIONS));
const MAX_DECLARATION_SETS = 64;
const MAX_REMEMBERED_CHECKS = 512;

/** What a check finds: the script's problems, or, when it has none, its declared input type. */
export interface ScriptInspection {
  diagnostics: Diagnostic[];
  /** TypeScript text of the default export's first parameter's type; absent when undeclared or unnamable. */
  inputType?: string;
}

export interface TypeChecker {
  check(input: TypeCheckInput): Diagnostic[];
  inspect(input: TypeCheckInput): ScriptInspection;
}

/** What a check's answer is remembered by: it is a pure function of these three texts. */
export function answerKey(input: TypeCheckInput): string {
  return createHash("sha256")
    .update(input.source)
    .update("\0")
    .update(input.declarationsKey)
    .update("\0")
    .update(input.declarations)
    .digest("hex");
}

export function createTypeChecker(): TypeChecker {
  const libs = new Map<string, ts.SourceFile | undefined>();
  const declarationSets = new Map<string, ts.SourceFile>();
  const globals = ts.createSourceFile(GLOBALS_FILE, GLOBALS, ts.ScriptTarget.ES2023, true);
  let previous: ts.Program | undefined;

  function lib(fileName: string): ts.SourceFile | undefined {
    if (!libs.has(fileName)) {
      const text = ts.sys.readFile(fileName);
      libs.set(
        fileName,
        text === undefined ? undefined : ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2023, true),
      );
    }
    return libs.get(fileName);
  }

  function declarations(key: string, text: string): ts.SourceFile {
    let file = declarationSets.get(key);
    if (!file || file.text !== text) {
      file = ts.createSourceFile(DECLARATIONS_FILE, text, ts.ScriptTarget.ES2023, true);
      if (declarationSets.size >= MAX_DECLARATION_SETS) declarationSets.clear();
      declarationSets.set(key, file);
    }
    return file;
  }

  const remembered = new Map<string, ScriptInspection>();

  function inspect(input: TypeCheckInput): ScriptInspection {
    const key = answerKey(input);
    let found = remembered.get(key);
    if (!found) {
      found = checkNow(input);
      if (remembered.size >= MAX_REMEMBERED_CHECKS) remembered.delete(remembered.keys().next().value ?? "");
      remembered.set(key, found);
    }
    const diagnostics = found.diagnostics.map((d) => ({ ...d }));
    return found.inputType === undefined ? { diagnostics } : { diagnostics, inputType: found.inputType };
  }

  return { inspect, check: (input) => inspect(input).diagnostics };

  function checkNow(input: TypeCheckInput): ScriptInspection {
    const script = ts.createSourceFile(SCRIPT_FILE, input.source, ts.ScriptTarget.ES2023, true, ts.ScriptKind.TS);
    const tools = declarations(input.declarationsKey, input.declarations);
    const host: ts.CompilerHost = {
      getSourceFile: (name) =>
        name === SCRIPT_FILE
          ? script
          : name === DECLARATIONS_FILE
            ? tools
            : name === GLOBALS_FILE
              ? globals
              : lib(name),
      getDefaultLibFileName: () => path.join(LIB_DIR, "lib.es2023.d.ts"),
      getDefaultLibLocation: () => LIB_DIR,
      writeFile: () => undefined,
      getCurrentDirectory: () => "/",
      getCanonicalFileName: (name) => name,
      useCaseSensitiveFileNames: () => true,
      getNewLine: () => "\n",
      fileExists: (name) =>
        name === SCRIPT_FILE || name === DECLARATIONS_FILE || name === GLOBALS_FILE || ts.sys.fileExists(name),
      readFile: (name) => ts.sys.readFile(name),
    };
    const program = ts.createProgram({
      rootNames: [SCRIPT_FILE, DECLARATIONS_FILE, GLOBALS_FILE],
      options: OPTIONS,
      host,
      oldProgram: previous,
    });
    previous = program;
    const found = applyScriptRules(script, [
      ...program.getSyntacticDiagnostics(script),
      ...program.getSemanticDiagnostics(script),
    ]);
    if (found.length > 0) return { diagnostics: found };
    const exported = defaultExportOf(program, script);
    if ("message" in exported) return { diagnostics: [exported] };
    const inputType = declaredInputType({ program, script, globalScope: globals }, exported);
    return inputType === undefined ? { diagnostics: [] } : { diagnostics: [], inputType };
  }
}

/** The run calls the default export with its input, so the script must have a callable one. */
function defaultExportOf(program: ts.Program, script: ts.SourceFile): ts.Symbol | Diagnostic {
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(script);
  const exported = moduleSymbol
    ? checker.getExportsOfModule(moduleSymbol).find((s) => s.name === "default")
    : undefined;
  if (!exported) {
    return {
      file: SCRIPT_FILE,
      line: 1,
      column: 1,
      message: "The script must have a default export: `export default async function main(input) { … }`.",
      code: 0,
    };
  }
  const type = checker.getTypeOfSymbolAtLocation(exported, script);
  if (type.getCallSignatures().length === 0) {
    return {
      file: SCRIPT_FILE,
      line: 1,
      column: 1,
      message: "The script's default export must be a function.",
      code: 0,
    };
  }
  return exported;
}
