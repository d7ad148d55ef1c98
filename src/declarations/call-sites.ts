/**
 * Where a script calls its tools, by line: what a reader of a run wants marked in its script
 * (the console marks those lines and names the calls each one made). Found with TypeScript's
 * parser, not by matching text: a call is a call expression on a binding imported from
 * `rewind:tools` (`tickets.create_ticket(…)`, `t.create_ticket(…)` after `import { tickets as t }`,
 * `tools.tickets.create_ticket(…)` after `import * as tools`), one of its built-ins (`sleep`,
 * `waitForSignal`, `webhook`, `workflows.<name>.start|signal`), or the http tool's `fetch`. Each
 * is named as the run's journal names its calls (`tickets.create_ticket`, `rewind.sleep`,
 * `http.fetch`), so the two can be matched. It reads the script only: a tool reached through a
 * variable (`const svc = tickets; svc.create_ticket()`) is not found, and nothing is lost by that
 * but the mark.
 */
import ts from "typescript";

export interface CallSite {
  /** 1-based line of the call's callee. */
  line: number;
  /** The tool as the journal names it. */
  tool: string;
}

const BUILTIN_CALLS: Record<string, string> = {
  sleep: "rewind.sleep",
  waitForSignal: "rewind.waitForSignal",
  webhook: "rewind.webhook",
};

/** Local names bound to `rewind:tools`: each named import's exported name, and the namespace import's name. */
function toolBindings(file: ts.SourceFile): { named: Map<string, string>; namespaces: Set<string> } {
  const named = new Map<string, string>();
  const namespaces = new Set<string>();
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (statement.moduleSpecifier.text !== "rewind:tools") continue;
    const bindings = statement.importClause?.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) namespaces.add(bindings.name.text);
    if (bindings && ts.isNamedImports(bindings))
      for (const element of bindings.elements)
        named.set(element.name.text, (element.propertyName ?? element.name).getText(file));
  }
  return { named, namespaces };
}

/** The callee as a chain of names (`tickets.create_ticket` → ["tickets", "create_ticket"]); undefined for anything else. */
function nameChain(expression: ts.Expression): string[] | undefined {
  if (ts.isIdentifier(expression)) return [expression.text];
  if (ts.isPropertyAccessExpression(expression)) {
    const head = nameChain(expression.expression);
    return head ? [...head, expression.name.text] : undefined;
  }
  if (ts.isParenthesizedExpression(expression) || ts.isNonNullExpression(expression))
    return nameChain(expression.expression);
  return undefined;
}

function toolOf(chain: string[], bindings: ReturnType<typeof toolBindings>): string | undefined {
  const [first, ...rest] = chain;
  if (first === undefined) return undefined;
  if (bindings.namespaces.has(first)) {
    const exported = rest[0];
    return exported ? toolOf(rest, { named: new Map([[exported, exported]]), namespaces: new Set() }) : undefined;
  }
  if (rest.length === 0) {
    if (first === "fetch") return "http.fetch";
    const exported = bindings.named.get(first);
    return exported ? BUILTIN_CALLS[exported] : undefined;
  }
  const exported = bindings.named.get(first);
  if (!exported) return undefined;
  if (exported === "workflows") return rest.length === 2 ? `rewind.workflows.${rest[1] ?? ""}` : undefined;
  return rest.length === 1 ? `${exported}.${rest[0] ?? ""}` : undefined;
}

/** Every call of a tool in `source`, in the order they are written. */
export function findCallSites(source: string): CallSite[] {
  const file = ts.createSourceFile("script.ts", source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const bindings = toolBindings(file);
  const sites: CallSite[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const chain = nameChain(node.expression);
      const tool = chain ? toolOf(chain, bindings) : undefined;
      if (tool) {
        const { line } = file.getLineAndCharacterOfPosition(node.expression.getStart(file));
        sites.push({ line: line + 1, tool });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return sites;
}
