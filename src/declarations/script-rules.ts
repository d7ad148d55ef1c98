/**
 * What a script must be beyond what the compiler checks, and what the compiler says in words a
 * model can act on. The compiler takes `import … from "fs"` for a missing @types package, passes
 * a top-level `await` that the sandbox cannot load, and reads `group.get-sum(…)` as a
 * subtraction, answering with the group's whole type. Each of these gets one diagnostic here
 * that says what to write instead, and the compiler's own diagnostics about it are dropped.
 */
import ts from "typescript";
import type { Diagnostic } from "./type-check.ts";

/** The only module a script can import. */
export const TOOLS_MODULE = "rewind:tools";

/** The code of a diagnostic of these rules, as of the script's other rules (the compiler's are positive). */
const RULE_CODE = 0;

/** The compiler's "Property 'x' does not exist on type …". */
const NO_SUCH_PROPERTY = 2339;

interface Span {
  start: number;
  end: number;
}

/**
 * The script's problems by these rules, and the compiler's diagnostics with those about the same
 * code left out or put in words a model can act on.
 */
export function applyScriptRules(script: ts.SourceFile, compiler: readonly ts.Diagnostic[]): Diagnostic[] {
  const found: Diagnostic[] = [];
  /** Where the compiler's diagnostics are replaced by one of ours. */
  const covered: Span[] = [];
  /** A problem at `where`, the compiler's diagnostics within `node` dropped. */
  const at = (node: ts.Node, message: string, where: ts.Node = node): void => {
    const { line, character } = script.getLineAndCharacterOfPosition(where.getStart(script));
    found.push({ file: script.fileName, line: line + 1, column: character + 1, message, code: RULE_CODE });
    covered.push({ start: node.getStart(script), end: node.getEnd() });
  };

  for (const statement of script.statements) {
    const specifier =
      ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement) ? statement.moduleSpecifier : undefined;
    if (specifier && ts.isStringLiteral(specifier) && specifier.text !== TOOLS_MODULE)
      at(
        specifier,
        `Only "${TOOLS_MODULE}" can be imported: a script runs in a sandbox without Node's modules or npm packages, so "${specifier.text}" is not there. Everything a script can use (its tools, sleep, http, …) comes from \`import { … } from "${TOOLS_MODULE}"\`.`,
      );
  }

  const visit = (node: ts.Node, inFunction: boolean): void => {
    // A literal specifier, which the compiler answers with a missing @types package; the sandbox refuses any other.
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    )
      at(
        node,
        `A script cannot load modules while it runs (\`import(…)\`): import what it uses from "${TOOLS_MODULE}" at the top.`,
      );
    if (!inFunction && (ts.isAwaitExpression(node) || (ts.isForOfStatement(node) && node.awaitModifier)))
      at(
        node,
        "`await` outside a function is not supported: a script's top level must load without waiting. Move it into `export default async function main(input) { … }`.",
      );
    const hyphenated = hyphenatedAccess(node, script);
    // Only where the compiler found no such property: `list.length - offset` is a subtraction.
    if (hyphenated && compiler.some((d) => d.code === NO_SUCH_PROPERTY && d.start === hyphenated.nameStart))
      at(
        node,
        `\`${hyphenated.written}\` reads as a subtraction: call a tool whose name has a hyphen with brackets, \`${hyphenated.object}["${hyphenated.name}"](…)\`.`,
        hyphenated.access,
      );
    const inside = inFunction || ts.isFunctionLike(node) || ts.isClassStaticBlockDeclaration(node);
    ts.forEachChild(node, (child) => visit(child, inside));
  };
  visit(script, false);

  const within = ({ start }: ts.Diagnostic): boolean =>
    start !== undefined && covered.some((span) => start >= span.start && start < span.end);
  const rest = compiler.filter((d) => !within(d)).map((d) => toDiagnostic(d, script));
  return [...found, ...rest].sort((a, b) => a.line - b.line || a.column - b.column);
}

/** A compiler diagnostic, with its file, line and column (1-based). */
export function toDiagnostic(d: ts.Diagnostic, script: ts.SourceFile): Diagnostic {
  const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
  if (!d.file || d.start === undefined) return { file: script.fileName, line: 1, column: 1, message, code: d.code };
  const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
  return { file: d.file.fileName, line: line + 1, column: character + 1, message, code: d.code };
}

/**
 * `group.get-sum(…)` (also `group.a-b-c(…)`) as the parser reads it: a subtraction whose left
 * side is a property access and whose right side names the rest, plain or called.
 */
function hyphenatedAccess(
  node: ts.Node,
  script: ts.SourceFile,
): { object: string; name: string; written: string; nameStart: number; access: ts.Node } | undefined {
  if (!ts.isBinaryExpression(node) || node.operatorToken.kind !== ts.SyntaxKind.MinusToken) return undefined;
  // The leftmost part of a chain a-b-c is the innermost subtraction's left side.
  if (ts.isBinaryExpression(node.parent) && node.parent.left === node) return undefined;
  const parts: string[] = [];
  let left: ts.Expression = node;
  const rights: ts.Expression[] = [];
  while (ts.isBinaryExpression(left) && left.operatorToken.kind === ts.SyntaxKind.MinusToken) {
    rights.unshift(left.right);
    left = left.left;
  }
  // `await group.get-sum(…)` is `(await group.get) - sum(…)`.
  if (ts.isAwaitExpression(left)) left = left.expression;
  if (!ts.isPropertyAccessExpression(left)) return undefined;
  parts.push(left.name.text);
  for (const right of rights) {
    const callee = ts.isCallExpression(right) ? right.expression : right;
    if (!ts.isIdentifier(callee)) return undefined;
    parts.push(callee.text);
  }
  const object = left.expression.getText(script);
  const name = parts.join("-");
  return { object, name, written: `${object}.${name}`, nameStart: left.name.getStart(script), access: left };
}
