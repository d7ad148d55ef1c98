/**
 * What a built package imports from other packages, read from its compiled JavaScript and
 * declarations: every bare specifier, and whether the JavaScript reaches it from the package's
 * entry points by static imports alone (loaded as soon as the package is) or only through an
 * `import()` (loaded on first use). The build checks these against the package's manifest, so a
 * package never ships an import its install does not bring, nor loads an optional one eagerly.
 */
import { readFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import path from "node:path";
import ts from "typescript";

export interface PackageImports {
  /** Packages the entry points load when they are imported. */
  eager: Set<string>;
  /** Packages loaded only through an `import()`. */
  lazy: Set<string>;
  /** Packages the declarations name (types a consumer's compiler resolves). */
  types: Set<string>;
}

const BUILTINS = new Set(builtinModules);

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`; undefined for relative paths and Node's modules. */
function packageName(specifier: string): string | undefined {
  if (specifier.startsWith(".") || specifier.startsWith("node:")) return undefined;
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
  return BUILTINS.has(name) ? undefined : name;
}

/** The module specifiers of one file: those of import and export declarations, and of `import("…")` calls. */
function specifiersOf(file: string, text: string): { specifier: string; dynamic: boolean }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const found: { specifier: string; dynamic: boolean }[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    )
      found.push({ specifier: node.moduleSpecifier.text, dynamic: false });
    else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    )
      found.push({ specifier: node.argument.literal.text, dynamic: false });
    else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    )
      found.push({ specifier: node.arguments[0].text, dynamic: true });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Follows the relative imports of `files`, calling `found` with each file's bare specifiers. */
async function walk(
  files: string[],
  resolve: (from: string, specifier: string) => string,
  found: (name: string, eager: boolean) => void,
): Promise<void> {
  const seen = new Map<string, boolean>(); // file → reached eagerly
  const queue = files.map((file) => ({ file, eager: true }));
  for (let next = queue.shift(); next; next = queue.shift()) {
    const { file, eager } = next;
    if (seen.get(file) === true || (seen.has(file) && !eager)) continue;
    seen.set(file, eager);
    for (const { specifier, dynamic } of specifiersOf(file, await readFile(file, "utf8"))) {
      const name = packageName(specifier);
      if (name) found(name, eager && !dynamic);
      else if (specifier.startsWith(".")) queue.push({ file: resolve(file, specifier), eager: eager && !dynamic });
    }
  }
}

/** The packages a build imports, from its entry points (compiled .js files, and the .d.ts beside each when `declarations`). */
export async function readPackageImports(entries: string[], declarations: boolean): Promise<PackageImports> {
  const result: PackageImports = { eager: new Set(), lazy: new Set(), types: new Set() };
  const beside = (from: string, specifier: string) => path.resolve(path.dirname(from), specifier);
  await walk(entries, beside, (name, eager) => (eager ? result.eager : result.lazy).add(name));
  for (const name of result.eager) result.lazy.delete(name);
  if (!declarations) return result;
  // Declarations keep the sources' `.ts` specifiers, which a consumer's compiler resolves to `.d.ts`.
  const typeEntries = entries.map((file) => file.replace(/\.js$/, ".d.ts"));
  const toDeclaration = (from: string, specifier: string) => beside(from, specifier).replace(/\.(ts|js)$/, ".d.ts");
  await walk(typeEntries, toDeclaration, (name) => result.types.add(name));
  return result;
}
