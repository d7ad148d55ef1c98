/**
 * The declared input type of a script: the type of its default export's first parameter, as
 * TypeScript text that stands on its own. A stored script's input type is rendered in the
 * declarations of every toolset that pins it, where the script's own type aliases and interfaces
 * do not exist, so local names are expanded into the structure they stand for; a type that can't
 * be written without a local name (a generic parameter, a recursive type) has no text, and the
 * input stays `unknown`. So does an input without an annotation, or annotated `unknown` or `any`.
 */
import ts from "typescript";
import { propertyKey } from "./json-schema-to-ts.ts";
import { acceptsUndefined, parseTypeText } from "./type-text.ts";

/**
 * Without UseAliasDefinedOutsideCurrentScope (a default of typeToString), the checker writes an
 * alias by its name only where that name is accessible: printed from the global scope, the
 * script's own aliases are written out as the types they stand for.
 */
const FLAGS = ts.TypeFormatFlags.NoTruncation;

/** Nesting deeper than this is not expanded: the input stays `unknown`. */
const MAX_DEPTH = 12;

export interface InputTypeContext {
  program: ts.Program;
  script: ts.SourceFile;
  /** A file in the global scope: names printed from here are global, or not accessible at all. */
  globalScope: ts.SourceFile;
}

/** The input type's text, or undefined when the script declares none or it can't be named. */
export function declaredInputType(context: InputTypeContext, exported: ts.Symbol): string | undefined {
  const checker = context.program.getTypeChecker();
  const signature = checker.getTypeOfSymbolAtLocation(exported, context.script).getCallSignatures()[0];
  const parameter = signature?.getParameters()[0]?.valueDeclaration;
  // A rest parameter gets the input as its first element: its type is not the input's.
  if (!parameter || !ts.isParameter(parameter) || !parameter.type || parameter.dotDotDotToken) return undefined;
  const kind = parameter.type.kind;
  if (kind === ts.SyntaxKind.UnknownKeyword || kind === ts.SyntaxKind.AnyKeyword) return undefined;
  const printer = new TypePrinter(
    checker,
    context.globalScope,
    globalTypeNames(context),
    localTypeNames(context.script),
  );
  const text = printer.print(checker.getTypeFromTypeNode(parameter.type), 0);
  if (text === undefined || text === "unknown" || text === "any") return undefined;
  const node = parseTypeText(text);
  if (!node) return undefined;
  const optional = parameter.questionToken !== undefined || parameter.initializer !== undefined;
  if (!optional || acceptsUndefined(node)) return text;
  const full = `${needsParens(text) ? `(${text})` : text} | undefined`;
  return parseTypeText(full) ? full : undefined;
}

/** By global scope file: the checker keeps one for its lifetime, and the library never changes. */
const libNames = new WeakMap<ts.SourceFile, Set<string>>();

/** Types, interfaces and namespaces the ES library declares in the global scope. */
function globalTypeNames(context: InputTypeContext): Set<string> {
  const known = libNames.get(context.globalScope);
  if (known) return known;
  const names = new Set<string>();
  const symbols = context.program
    .getTypeChecker()
    .getSymbolsInScope(context.globalScope, ts.SymbolFlags.Type | ts.SymbolFlags.Namespace);
  for (const symbol of symbols) {
    const declarations = symbol.declarations ?? [];
    const fromLib = declarations.every((d) => context.program.isSourceFileDefaultLibrary(d.getSourceFile()));
    if (declarations.length > 0 && fromLib) names.add(symbol.name);
  }
  libNames.set(context.globalScope, names);
  return names;
}

/** Every type name the script declares itself, at any depth: such a name never counts as global. */
function localTypeNames(script: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (
      (ts.isInterfaceDeclaration(node) ||
        ts.isTypeAliasDeclaration(node) ||
        ts.isClassDeclaration(node) ||
        ts.isEnumDeclaration(node) ||
        ts.isModuleDeclaration(node) ||
        ts.isTypeParameterDeclaration(node)) &&
      node.name &&
      ts.isIdentifier(node.name)
    )
      names.add(node.name.text);
    if (ts.isImportSpecifier(node) || ts.isImportClause(node) || ts.isNamespaceImport(node)) {
      if (node.name) names.add(node.name.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(script);
  return names;
}

/** Prints a type with the checker where that names only globals, and structurally where it does not. */
class TypePrinter {
  private readonly open = new Set<ts.Type>();
  private readonly checker: ts.TypeChecker;
  private readonly scope: ts.Node;
  private readonly globals: ReadonlySet<string>;
  private readonly locals: ReadonlySet<string>;

  constructor(checker: ts.TypeChecker, scope: ts.Node, globals: ReadonlySet<string>, locals: ReadonlySet<string>) {
    this.checker = checker;
    this.scope = scope;
    this.globals = globals;
    this.locals = locals;
  }

  print(type: ts.Type, depth: number): string | undefined {
    if (depth > MAX_DEPTH || this.open.has(type)) return undefined;
    const text = this.checker.typeToString(type, this.scope, FLAGS);
    if (this.standsAlone(text)) return text;
    this.open.add(type);
    try {
      return this.expand(type, depth + 1);
    } finally {
      this.open.delete(type);
    }
  }

  private standsAlone(text: string): boolean {
    const node = parseTypeText(text);
    return node !== undefined && referencedNames(node).every((n) => this.globals.has(n) && !this.locals.has(n));
  }

  private expand(type: ts.Type, depth: number): string | undefined {
    if (type.isUnion()) return this.join(type.types, " | ", depth);
    if (type.isIntersection()) return this.join(type.types, " & ", depth);
    if (this.checker.isArrayType(type)) {
      const element = this.checker.getTypeArguments(type as ts.TypeReference)[0];
      const text = element && this.print(element, depth);
      if (text === undefined) return undefined;
      const readonly = type.getSymbol()?.name === "ReadonlyArray" ? "readonly " : "";
      return `${readonly}${needsParens(text) ? `(${text})` : text}[]`;
    }
    if (this.checker.isTupleType(type)) return this.tuple(type as ts.TupleTypeReference, depth);
    if (type.flags & ts.TypeFlags.Object) return this.object(type, depth);
    return undefined;
  }

  private join(types: readonly ts.Type[], separator: string, depth: number): string | undefined {
    const parts: string[] = [];
    for (const member of types) {
      const text = this.print(member, depth);
      if (text === undefined) return undefined;
      parts.push(needsParens(text) ? `(${text})` : text);
    }
    return parts.join(separator);
  }

  private tuple(type: ts.TupleTypeReference, depth: number): string | undefined {
    const flags = type.target.elementFlags;
    const parts: string[] = [];
    for (const [i, element] of this.checker.getTypeArguments(type).entries()) {
      const flag = flags[i] ?? ts.ElementFlags.Required;
      const text = flag & ts.ElementFlags.Optional ? this.printDefined(element, depth) : this.print(element, depth);
      if (text === undefined) return undefined;
      const wrapped = needsParens(text) ? `(${text})` : text;
      if (flag & ts.ElementFlags.Optional) parts.push(`${wrapped}?`);
      else if (flag & ts.ElementFlags.Rest) parts.push(`...${wrapped}[]`);
      else if (flag & ts.ElementFlags.Variadic) parts.push(`...${text}`);
      else parts.push(text);
    }
    return `${type.target.readonly ? "readonly " : ""}[${parts.join(", ")}]`;
  }

  private object(type: ts.Type, depth: number): string | undefined {
    if (type.getCallSignatures().length > 0 || type.getConstructSignatures().length > 0) return undefined;
    const members: string[] = [];
    for (const info of this.checker.getIndexInfosOfType(type)) {
      const key = this.print(info.keyType, depth);
      const value = this.print(info.type, depth);
      if (key === undefined || value === undefined) return undefined;
      members.push(`${info.isReadonly ? "readonly " : ""}[key: ${key}]: ${value}`);
    }
    for (const property of this.checker.getPropertiesOfType(type)) {
      if (property.name.startsWith("__@") || property.name.startsWith("#")) return undefined;
      const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
      const text = optional
        ? this.printOptional(property, depth)
        : this.print(this.checker.getTypeOfSymbol(property), depth);
      if (text === undefined) return undefined;
      const modifiers = (property.declarations ?? []).reduce((all, d) => all | ts.getCombinedModifierFlags(d), 0);
      // A class with private members is nominal: no object type stands for it.
      if (modifiers & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) return undefined;
      const readonly = (modifiers & ts.ModifierFlags.Readonly) !== 0;
      members.push(`${readonly ? "readonly " : ""}${propertyKey(property.name)}${optional ? "?" : ""}: ${text}`);
    }
    return members.length === 0 ? "{}" : `{ ${members.join("; ")}; }`;
  }

  /** An optional property's type reads with `undefined`; its declaration, when it has one, says it without. */
  private printOptional(property: ts.Symbol, depth: number): string | undefined {
    const declaration = property.valueDeclaration;
    if (
      declaration &&
      (ts.isPropertySignature(declaration) || ts.isPropertyDeclaration(declaration)) &&
      declaration.type
    )
      return this.print(this.checker.getTypeFromTypeNode(declaration.type), depth);
    return this.printDefined(this.checker.getTypeOfSymbol(property), depth);
  }

  /** `type` without its `undefined` member, which an optional element or property implies. */
  private printDefined(type: ts.Type, depth: number): string | undefined {
    if (!type.isUnion()) return this.print(type, depth);
    const kept = type.types.filter((t) => (t.flags & ts.TypeFlags.Undefined) === 0);
    return kept.length === 1 && kept[0] ? this.print(kept[0], depth) : this.join(kept, " | ", depth);
  }
}

/** The leftmost names a type refers to: `Record`, `Intl` of `Intl.Collator`, and so on. */
function referencedNames(node: ts.Node): string[] {
  const names: string[] = [];
  const visit = (child: ts.Node): void => {
    if (ts.isTypeReferenceNode(child) || ts.isExpressionWithTypeArguments(child)) {
      let name: ts.Node = ts.isTypeReferenceNode(child) ? child.typeName : child.expression;
      while (ts.isQualifiedName(name)) name = name.left;
      while (ts.isPropertyAccessExpression(name)) name = name.expression;
      names.push(ts.isIdentifier(name) ? name.text : "");
    }
    ts.forEachChild(child, visit);
  };
  visit(node);
  return names;
}

/** Types that must be parenthesized inside a union, an intersection or an array. */
function needsParens(text: string): boolean {
  const node = parseTypeText(text);
  if (!node) return true;
  return (
    ts.isFunctionTypeNode(node) ||
    ts.isConstructorTypeNode(node) ||
    ts.isConditionalTypeNode(node) ||
    ts.isUnionTypeNode(node) ||
    ts.isIntersectionTypeNode(node) ||
    ts.isTypeOperatorNode(node) ||
    ts.isInferTypeNode(node)
  );
}
