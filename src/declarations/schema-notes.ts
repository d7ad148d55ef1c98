/**
 * What a schema says about a value besides its type: its description, and the bounds, length,
 * pattern, format and default a server checks arguments against. A model cannot keep to a bound
 * it was never shown: a FastMCP server refused `limit: 500` (`arguments/limit must be <= 50`)
 * when the prompt said only `limit?: number`. The prompt shows these notes after an argument's
 * description (`(1–50, default 10)`), the .d.ts as JSDoc tags on the property (`@maximum 50`).
 *
 * Notes are text, never types: what a script type-checks against is the same with them or
 * without, so a script that checked before still does, and no sandbox runtime version is needed
 * for them (see runtime-version.ts).
 *
 * A property's notes are its own, then those of what it stands for, the nearest first: the
 * definition its `$ref` names (rmcp describes an enum on its `$defs` entry), the one branch of a
 * nullable `anyOf`/`oneOf` that is not null (pydantic's `X | None`), a lone `allOf` entry.
 * Schemas come from servers we do not control: a reader follows at most MAX_HOPS such links per
 * property, reads each schema node once (a default reached through many references is printed
 * once), prints each value into a bounded length (bounded-text.ts), and never throws.
 */
import { boundedJson, oneLineText } from "./bounded-text.ts";
import { resolveRef } from "./resolve-ref.ts";

/** The keywords shown; numbers as they are, the rest already printed into one bounded line. */
export interface Constraints {
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  /** As written, or as a JSON string when it holds a control character; cut past MAX_PATTERN. */
  pattern?: string;
  format?: string;
  /**
   * JSON, cut past MAX_DEFAULT; the nearest default only. A default of null is not shown (leaving
   * the argument out says as much), but still hides a default further on.
   */
  default?: string;
}

/** The order both renderings show them in. */
export const CONSTRAINT_KEYWORDS = [
  "minimum",
  "exclusiveMinimum",
  "maximum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "pattern",
  "format",
  "default",
] as const satisfies readonly (keyof Constraints)[];

export interface SchemaNotes {
  description: string | undefined;
  constraints: Constraints;
  /** The nearest schema on the way with `properties` or `items`: where the value's fields are described. */
  shape: Record<string, unknown> | undefined;
}

/** The notes of a property's schema; made for one `root` (what `#/...` resolves against). */
export type NotesReader = (schema: unknown) => SchemaNotes;

const MAX_HOPS = 8;
const MAX_DEFAULT = 100;
const MAX_PATTERN = 200;
const MAX_FORMAT = 60;
/** A longer reference is not followed for notes: resolving one costs its length. */
const MAX_REF = 1000;

/** What one node says itself, and what it stands for (whose notes come after its own). */
interface OwnNotes {
  description: string | undefined;
  /** Its constraints but the default. */
  constraints: Constraints;
  /** Its default, printed; null for a default of null, undefined for none. */
  default: string | null | undefined;
  next: unknown;
}

/** A reader for the schemas inside `root`, to use for one rendering (it remembers what it read). */
export function notesReader(root: unknown): NotesReader {
  const read = new WeakMap<object, OwnNotes>();
  const own = (node: Record<string, unknown>): OwnNotes => {
    let notes = read.get(node);
    if (!notes) {
      notes = ownNotes(node, root);
      read.set(node, notes);
    }
    return notes;
  };
  return (schema) => {
    const notes: SchemaNotes = { description: undefined, constraints: {}, shape: undefined };
    try {
      const seen: object[] = [];
      let defaulted = false;
      for (let node = schema; isRecord(node) && seen.length < MAX_HOPS && !seen.includes(node);) {
        seen.push(node);
        const found = own(node);
        notes.description ??= found.description;
        notes.constraints = { ...found.constraints, ...notes.constraints };
        if (!defaulted && found.default !== undefined) {
          defaulted = true;
          if (found.default !== null) notes.constraints.default = found.default;
        }
        if (!notes.shape && (isRecord(node.properties) || isRecord(node.items))) notes.shape = node;
        node = found.next;
      }
    } catch {
      // A schema that throws when read (a proxy, a getter) has said all it will.
    }
    return notes;
  };
}

function ownNotes(node: Record<string, unknown>, root: unknown): OwnNotes {
  const description = typeof node.description === "string" && node.description.trim() ? node.description : undefined;
  const value = Object.hasOwn(node, "default") ? node.default : undefined;
  const printed = value === undefined ? undefined : value === null ? null : boundedJson(value, MAX_DEFAULT);
  return { description, constraints: constraintsOf(node), default: printed, next: standsFor(node, root) };
}

function standsFor(node: Record<string, unknown>, root: unknown): unknown {
  if (typeof node.$ref === "string") return node.$ref.length <= MAX_REF ? resolveRef(node.$ref, root) : undefined;
  for (const branches of [node.anyOf, node.oneOf]) {
    if (!Array.isArray(branches) || branches.length > 2) continue;
    const notNull = (branches as unknown[]).filter((b) => !(isRecord(b) && b.type === "null"));
    if (notNull.length === 1) return notNull[0];
  }
  return Array.isArray(node.allOf) && node.allOf.length === 1 ? (node.allOf as unknown[])[0] : undefined;
}

function constraintsOf(s: Record<string, unknown>): Constraints {
  const c: Constraints = {};
  const put = <K extends keyof Constraints>(key: K, value: Constraints[K] | undefined): void => {
    if (value !== undefined) c[key] = value;
  };
  // Draft 4 writes an exclusive bound as `minimum` with `exclusiveMinimum: true`.
  if (s.exclusiveMinimum === true) put("exclusiveMinimum", bound(s.minimum));
  else put("minimum", bound(s.minimum));
  put("exclusiveMinimum", bound(s.exclusiveMinimum));
  if (s.exclusiveMaximum === true) put("exclusiveMaximum", bound(s.maximum));
  else put("maximum", bound(s.maximum));
  put("exclusiveMaximum", bound(s.exclusiveMaximum));
  // A lower count of 0 bounds nothing; an upper one of 0 does (only the empty string or array).
  put("minLength", count(s.minLength, 1));
  put("maxLength", count(s.maxLength, 0));
  // A tuple's type already says how many items it must have (json-schema-to-ts.ts).
  if (!isTuple(s)) put("minItems", count(s.minItems, 1));
  put("maxItems", count(s.maxItems, 0));
  if (typeof s.pattern === "string" && s.pattern) put("pattern", oneLineText(s.pattern, MAX_PATTERN));
  if (typeof s.format === "string" && s.format) put("format", oneLineText(s.format, MAX_FORMAT));
  return c;
}

/**
 * A numeric bound worth showing. One at ±(2^53 − 1) or past it is a library's integer type
 * (zod's `.int()` writes `maximum: 9007199254740991`), not a limit the server chose.
 */
function bound(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && Math.abs(value) < Number.MAX_SAFE_INTEGER
    ? value
    : undefined;
}

function count(value: unknown, least: number): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= least ? value : undefined;
}

function isTuple(s: Record<string, unknown>): boolean {
  return Array.isArray(s.prefixItems) || Array.isArray(s.items);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
