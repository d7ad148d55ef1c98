/**
 * The gate for TypeScript type text that is written into declarations: a stored script's input
 * type. The text was made by our own type-checker, but it is kept in a record and read back, so it
 * is parsed again before each rendering and accepted only when it is one type on one line and
 * nothing else: no statement can end it early, no comment can swallow what follows it, no
 * `import("…")` or `typeof` can reach outside the declarations. Anything else renders as `unknown`.
 */
import ts from "typescript";

/** Longer input types are not worth their prompt tokens; they render as `unknown`. */
export const MAX_TYPE_TEXT_LENGTH = 4000;

const PREFIX = "type __Input = ";

/** `text` when it is exactly one type the declarations may hold; undefined otherwise. */
export function checkedTypeText(text: string): string | undefined {
  return parseTypeText(text) ? text : undefined;
}

/** The parsed type node of `text` when the gate accepts it. */
export function parseTypeText(text: string): ts.TypeNode | undefined {
  if (text.length === 0 || text.length > MAX_TYPE_TEXT_LENGTH || /[\r\n\u2028\u2029]/.test(text)) return undefined;
  if (hasCommentOrBadToken(text)) return undefined;
  const source = `${PREFIX}${text};`;
  const file = ts.createSourceFile("type-text.ts", source, ts.ScriptTarget.ES2023, true, ts.ScriptKind.TS);
  if (syntaxErrorsOf(file) > 0) return undefined;
  const [statement, ...rest] = file.statements;
  if (!statement || rest.length > 0 || !ts.isTypeAliasDeclaration(statement)) return undefined;
  const type = statement.type;
  if (type.getStart(file) !== PREFIX.length || type.end !== PREFIX.length + text.length) return undefined;
  return reachesOutside(type) ? undefined : type;
}

/** Whether the type may be left out (`start(input?: T)`): it is unknown, any, or a union with undefined. */
export function acceptsUndefined(type: ts.TypeNode): boolean {
  const open = [ts.SyntaxKind.UnknownKeyword, ts.SyntaxKind.AnyKeyword, ts.SyntaxKind.UndefinedKeyword];
  if (open.includes(type.kind)) return true;
  if (ts.isParenthesizedTypeNode(type)) return acceptsUndefined(type.type);
  return ts.isUnionTypeNode(type) && type.types.some(acceptsUndefined);
}

/** Comments, and anything the scanner does not know, are refused before parsing. */
function hasCommentOrBadToken(text: string): boolean {
  const scanner = ts.createScanner(ts.ScriptTarget.ES2023, false, ts.LanguageVariant.Standard, text);
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
    if (
      token === ts.SyntaxKind.SingleLineCommentTrivia ||
      token === ts.SyntaxKind.MultiLineCommentTrivia ||
      token === ts.SyntaxKind.Unknown ||
      token === ts.SyntaxKind.ConflictMarkerTrivia
    )
      return true;
  }
  return false;
}

/** The parser's own diagnostics (public through a program-less transpile of the one file). */
function syntaxErrorsOf(file: ts.SourceFile): number {
  const result = ts.transpileModule(file.text, {
    reportDiagnostics: true,
    compilerOptions: { target: ts.ScriptTarget.ES2023, module: ts.ModuleKind.ESNext, noLib: true, noResolve: true },
    fileName: file.fileName,
  });
  return result.diagnostics?.length ?? 0;
}

/** Types that name a module or a value: `import("x").T`, `typeof x`. */
function reachesOutside(node: ts.Node): boolean {
  if (ts.isImportTypeNode(node) || ts.isTypeQueryNode(node)) return true;
  return ts.forEachChild(node, (child) => (reachesOutside(child) ? true : undefined)) ?? false;
}

/**
 * The type as the prompt writes object types, like tool arguments: members apart by commas, no
 * separator after the last (`{ day: number, channel?: string }`). Only separators change.
 */
export function promptTypeText(text: string): string | undefined {
  const type = parseTypeText(text);
  if (!type) return undefined;
  const edits: { at: number; with: string }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isTypeLiteralNode(node)) {
      node.members.forEach((member, i) => {
        const last = member.end - 1 - PREFIX.length;
        const separator = text[last];
        if (separator === ";" || separator === ",")
          edits.push({ at: last, with: i === node.members.length - 1 ? "" : "," });
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(type);
  let out = text;
  for (const edit of edits.sort((a, b) => b.at - a.at))
    out = out.slice(0, edit.at) + edit.with + out.slice(edit.at + 1);
  return out;
}
