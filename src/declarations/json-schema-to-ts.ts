/**
 * Turns a pinned JSON Schema into an inline TypeScript type: the declarations the type-checker
 * reads and the one-line text a model reads both come from here. Schemas come from servers we
 * do not control, so this never throws and bounds its work: whatever it cannot express (or will
 * not, past a budget) becomes `unknown`, which stays permissive for arguments and honest for
 * results.
 */
import { jsDocOfNotes, type JsDoc } from "./notes-text.ts";
import { resolveRef } from "./resolve-ref.ts";
import { notesReader, type NotesReader } from "./schema-notes.ts";

export type TypeStyle = "dts" | "prompt";

export interface JsonSchemaToTsOptions {
  /**
   * `dts`: members separated by `;`, property descriptions and constraints as JSDoc (multi-line
   * when there are any; see schema-notes.ts). `prompt`: one compact line, members separated by
   * `,`, no descriptions. Default `dts`.
   */
  style?: TypeStyle;
  /** Indentation of the line the type starts on; multi-line members go two spaces deeper. Default "". */
  indent?: string;
  /** Nesting of objects and arrays past which a type becomes `unknown`. Default 8. */
  maxDepth?: number;
  /** What `#/...` references resolve against. Default: the schema itself. */
  root?: unknown;
}

/** A small type tree, so unions can be simplified and parenthesized before anything is printed. */
type Ts =
  | { k: "name"; text: string }
  | { k: "array"; of: Ts }
  | { k: "tuple"; items: Ts[]; required: number; rest: Ts | undefined }
  | { k: "object"; members: Member[]; index: Ts | undefined }
  | { k: "union" | "and"; of: Ts[] };

interface Member {
  key: string;
  optional: boolean;
  type: Ts;
  /** The property's description and constraint tags (`@maximum 50`), for the `dts` style. */
  doc: JsDoc | undefined;
}

interface Ctx {
  root: unknown;
  maxDepth: number;
  budget: number;
  /** How often each schema object is being expanded: recursion gets one more level, then `unknown`. */
  path: Map<object, number>;
  /** How the `dts` style reads a property's description and constraints; absent for `prompt`. */
  notes: NotesReader | undefined;
  /** Properties whose notes may still be read. */
  notesLeft: number;
}

const name = (text: string): Ts => ({ k: "name", text });
const UNKNOWN = name("unknown");
const NEVER = name("never");
const NULL = name("null");

/** Schema nodes visited per call, hops through `$ref`/`anyOf` chains, and printed length. */
const NODE_BUDGET = 2000;
const MAX_HOPS = 64;
const MAX_OUTPUT = 50_000;
const MAX_LITERALS = 64;
const MAX_LITERAL_LENGTH = 200;
const MAX_TUPLE = 16;
const MAX_PROPERTIES = 200;
const MAX_INDEX_UNION = 300;
const MAX_REENTRY = 1;
const MAX_DOC = 8000;
/** Past this width a `dts` object goes one member per line, for whoever reads the file. */
const LINE_WIDTH = 100;

export function jsonSchemaToTs(schema: unknown, options: JsonSchemaToTsOptions = {}): string {
  try {
    const cx: Ctx = {
      root: options.root ?? schema,
      maxDepth: options.maxDepth ?? 8,
      budget: NODE_BUDGET,
      path: new Map(),
      notes: options.style === "prompt" ? undefined : notesReader(options.root ?? schema),
      notesLeft: NODE_BUDGET,
    };
    const text = print(convert(schema, 0, 0, cx), options.style ?? "dts", options.indent ?? "");
    return text.length > MAX_OUTPUT ? "unknown" : text;
  } catch {
    return "unknown";
  }
}

/**
 * A JSDoc block at `indent`, one line when the text is: the text (cut past MAX_DOC), then the
 * tags a line each (`@default 10`). `*\/` cannot end the comment early.
 */
export function formatJsDoc(text: string, indent: string, tags: readonly string[] = []): string {
  const clipped = text.length > MAX_DOC ? `${text.slice(0, MAX_DOC)}…` : text;
  const lines = [...(clipped.trim() ? clipped.trim().split(/\r?\n/) : []), ...tags].map((line) =>
    line.replaceAll("*/", "*\\/").trimEnd(),
  );
  if (lines.length <= 1) return `${indent}/** ${lines[0] ?? ""} */`;
  return [`${indent}/**`, ...lines.map((line) => `${indent} *${line ? ` ${line}` : ""}`), `${indent} */`].join("\n");
}

export function isIdentifierName(key: string): boolean {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key);
}

/**
 * A property or method name as written in a type: bare when possible, else a string literal.
 * `new` is quoted too, because `new(args)` in a type literal declares a constructor.
 */
export function propertyKey(key: string): string {
  return isIdentifierName(key) && key !== "new" ? key : JSON.stringify(key);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asArray(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? (value as unknown[]) : undefined;
}

function isName(t: Ts, text: string): boolean {
  return t.k === "name" && t.text === text;
}

function convert(schema: unknown, depth: number, hops: number, cx: Ctx): Ts {
  if (schema === true) return UNKNOWN;
  if (schema === false) return NEVER;
  const expanding = isRecord(schema) ? (cx.path.get(schema) ?? 0) : 0;
  if (!isRecord(schema) || depth > cx.maxDepth || hops > MAX_HOPS || --cx.budget < 0 || expanding > MAX_REENTRY)
    return UNKNOWN;
  cx.path.set(schema, expanding + 1);
  try {
    const parts = [ownType(schema, depth, hops, cx)];
    if (typeof schema.$ref === "string") parts.push(convert(resolveRef(schema.$ref, cx.root), depth, hops + 1, cx));
    const branches = (key: string): Ts[] => (asArray(schema[key]) ?? []).map((s) => convert(s, depth, hops + 1, cx));
    // An empty anyOf/oneOf is not a valid schema; reading it as "nothing matches" would only hide tools.
    for (const key of ["anyOf", "oneOf"]) if (asArray(schema[key])?.length) parts.push(union(branches(key)));
    parts.push(...branches("allOf"));
    const type = intersection(parts);
    return schema.nullable === true ? union([type, NULL]) : type;
  } finally {
    if (expanding === 0) cx.path.delete(schema);
    else cx.path.set(schema, expanding);
  }
}

function ownType(schema: Record<string, unknown>, depth: number, hops: number, cx: Ctx): Ts {
  if (Object.hasOwn(schema, "const")) return literal(schema.const);
  const values = asArray(schema.enum);
  if (values) {
    if (values.length <= MAX_LITERALS) return union(values.map(literal));
    return union(
      values.map((v) =>
        v === null
          ? NULL
          : name(typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? typeof v : "unknown"),
      ),
    );
  }
  return union(typeNames(schema).map((type) => byType(type, schema, depth, hops, cx)));
}

function typeNames(schema: Record<string, unknown>): string[] {
  if (typeof schema.type === "string") return [schema.type];
  if (Array.isArray(schema.type)) return (schema.type as unknown[]).filter((t) => typeof t === "string");
  if ("properties" in schema || "additionalProperties" in schema || "patternProperties" in schema) return ["object"];
  if ("items" in schema || "prefixItems" in schema) return ["array"];
  return ["unknown"];
}

function byType(type: string, schema: Record<string, unknown>, depth: number, hops: number, cx: Ctx): Ts {
  switch (type) {
    case "string":
    case "boolean":
    case "null":
      return name(type);
    case "number":
    case "integer":
      return name("number");
    case "array":
      return arrayType(schema, depth, hops, cx);
    case "object":
      return objectType(schema, depth, hops, cx);
    default:
      return UNKNOWN;
  }
}

function literal(value: unknown): Ts {
  if (typeof value === "string")
    return value.length > MAX_LITERAL_LENGTH ? name("string") : name(JSON.stringify(value));
  if (typeof value === "number") return Number.isFinite(value) ? name(JSON.stringify(value)) : name("number");
  if (typeof value === "boolean" || value === null) return name(String(value));
  return UNKNOWN;
}

/** `items` (one schema), `prefixItems` + `items`, or draft 7's `items` array + `additionalItems`. */
function arrayType(schema: Record<string, unknown>, depth: number, hops: number, cx: Ctx): Ts {
  const sub = (s: unknown): Ts => convert(s, depth + 1, hops, cx);
  const modern = asArray(schema.prefixItems);
  const prefix = modern ?? asArray(schema.items);
  if (prefix === undefined) return { k: "array", of: schema.items === undefined ? UNKNOWN : sub(schema.items) };
  const restSchema = modern ? schema.items : schema.additionalItems;
  const rest = restSchema === undefined ? UNKNOWN : sub(restSchema);
  const items = prefix.slice(0, MAX_TUPLE).map(sub);
  if (prefix.length > MAX_TUPLE) return { k: "array", of: union([...items, UNKNOWN]) };
  const minItems = typeof schema.minItems === "number" ? schema.minItems : 0;
  return {
    k: "tuple",
    items,
    required: Math.min(minItems, items.length),
    rest: isName(rest, "never") ? undefined : rest,
  };
}

function objectType(schema: Record<string, unknown>, depth: number, hops: number, cx: Ctx): Ts {
  const sub = (s: unknown): Ts => convert(s, depth + 1, hops, cx);
  const required = new Set((asArray(schema.required) ?? []).filter((r) => typeof r === "string"));
  const entries = isRecord(schema.properties) ? Object.entries(schema.properties) : [];
  const members = entries.slice(0, MAX_PROPERTIES).map(([key, s]): Member => {
    return { key, optional: !required.has(key), type: sub(s), doc: memberDoc(s, cx) };
  });
  const extras: Ts[] = entries.length > MAX_PROPERTIES ? [UNKNOWN] : [];
  if (isRecord(schema.patternProperties)) extras.push(...Object.values(schema.patternProperties).map(sub));
  const additional = schema.additionalProperties;
  if (additional === true || isRecord(additional)) extras.push(sub(additional));
  if (extras.length === 0) return { k: "object", members, index: undefined };
  return { k: "object", members, index: indexType(union(extras), members) };
}

/**
 * A property's JSDoc, while the budget lasts: its description and constraints, followed through
 * `$ref`. A comment only: the member's type is the same with it or without (schema-notes.ts).
 */
function memberDoc(schema: unknown, cx: Ctx): JsDoc | undefined {
  if (!cx.notes || --cx.notesLeft < 0) return undefined;
  const doc = jsDocOfNotes(cx.notes(schema));
  return doc.text || doc.tags.length > 0 ? doc : undefined;
}

/** Under `strict`, every declared property must also fit the index signature's type. */
function indexType(extra: Ts, members: Member[]): Ts {
  if (members.length === 0 || isName(extra, "unknown")) return extra;
  const optional = members.some((m) => m.optional) ? [name("undefined")] : [];
  const widened = union([extra, ...members.map((m) => m.type), ...optional]);
  return print(widened, "prompt", "").length > MAX_INDEX_UNION ? UNKNOWN : widened;
}

function flatten(kind: "union" | "and", types: Ts[]): Ts[] {
  const out = new Map<string, Ts>();
  for (const t of types) for (const part of t.k === kind ? t.of : [t]) out.set(print(part, "prompt", ""), part);
  return [...out.values()];
}

function union(types: Ts[]): Ts {
  const parts = flatten("union", types).filter((t) => !isName(t, "never"));
  if (parts.some((t) => isName(t, "unknown"))) return UNKNOWN;
  return parts.length === 0 ? NEVER : parts.length === 1 ? (parts[0] ?? NEVER) : { k: "union", of: parts };
}

function intersection(types: Ts[]): Ts {
  const parts = flatten("and", types).filter((t) => !isName(t, "unknown"));
  if (parts.some((t) => isName(t, "never"))) return NEVER;
  return parts.length === 0 ? UNKNOWN : parts.length === 1 ? (parts[0] ?? UNKNOWN) : { k: "and", of: parts };
}

function print(t: Ts, style: TypeStyle, indent: string): string {
  const wrap = (x: Ts): string => {
    const text = print(x, style, indent);
    return x.k === "union" || x.k === "and" || text.startsWith("-") ? `(${text})` : text;
  };
  switch (t.k) {
    case "name":
      return t.text;
    case "array":
      return `${wrap(t.of)}[]`;
    case "union":
      return t.of.map((x) => print(x, style, indent)).join(" | ");
    case "and":
      return t.of.map((x) => (x.k === "union" ? wrap(x) : print(x, style, indent))).join(" & ");
    case "tuple": {
      const items = t.items.map((x, i) => (i < t.required ? print(x, style, indent) : `${wrap(x)}?`));
      if (t.rest) items.push(`...${wrap(t.rest)}[]`);
      return `[${items.join(", ")}]`;
    }
    case "object":
      return printObject(t.members, t.index, style, indent);
  }
}

function printObject(members: Member[], index: Ts | undefined, style: TypeStyle, indent: string): string {
  const inner = `${indent}  `;
  const parts = members.map((m) => `${propertyKey(m.key)}${m.optional ? "?" : ""}: ${print(m.type, style, inner)}`);
  const docs = members.map((m) => m.doc);
  if (index) {
    parts.push(`[key: string]: ${print(index, style, inner)}`);
    docs.push(undefined);
  }
  if (parts.length === 0) return "{}";
  if (style === "prompt") return `{ ${parts.join(", ")} }`;
  const line = `{ ${parts.join("; ")} }`;
  if (!docs.some(Boolean) && !line.includes("\n") && line.length <= LINE_WIDTH) return line;
  const lines = parts.map((part, i) => {
    const doc = docs[i];
    return `${doc ? `${formatJsDoc(doc.text ?? "", inner, doc.tags)}\n` : ""}${inner}${part};`;
  });
  return `{\n${lines.join("\n")}\n${indent}}`;
}
