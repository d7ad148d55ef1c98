/**
 * How the renderings write a schema's notes (schema-notes.ts). The prompt puts them in words
 * after an argument's description, `- limit: At most this many notes (1–50, default 10)`; the
 * .d.ts puts them as JSDoc tags under the property's description (`@minimum 1`), the names
 * editors and JSON-Schema-to-TypeScript tools use, which models have read a great deal of.
 */
import { CONSTRAINT_KEYWORDS } from "./schema-notes.ts";
import type { Constraints, SchemaNotes } from "./schema-notes.ts";

/** The prompt's words for a property's constraints and default: `1–50, default 10`; "" for none. */
export function constraintsPhrase(c: Constraints): string {
  const parts = [
    rangePhrase(c),
    sizePhrase(c.minLength, c.maxLength, "character"),
    sizePhrase(c.minItems, c.maxItems, "item"),
    c.pattern === undefined ? undefined : `pattern ${c.pattern}`,
    c.format === undefined ? undefined : `format ${c.format}`,
    c.default === undefined ? undefined : `default ${c.default}`,
  ];
  return parts.filter((part) => part !== undefined).join(", ");
}

/** A description (whitespace already folded) and its constraints, as one line of the prompt. */
export function describedLine(description: string, c: Constraints): string {
  const phrase = constraintsPhrase(c);
  if (!phrase) return description;
  return description ? `${description} (${phrase})` : `(${phrase})`;
}

/** A property's JSDoc: its description, then one tag per constraint (`@maxLength 120`). */
export interface JsDoc {
  text: string | undefined;
  tags: string[];
}

export function jsDocOfNotes(notes: SchemaNotes): JsDoc {
  const tags = CONSTRAINT_KEYWORDS.flatMap((key) => {
    const value = notes.constraints[key];
    return value === undefined ? [] : [`@${key} ${value}`];
  });
  return { text: notes.description, tags };
}

function rangePhrase(c: Constraints): string | undefined {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = c;
  const lower = exclusiveMinimum === undefined ? minimum : undefined;
  const upper = exclusiveMaximum === undefined ? maximum : undefined;
  if (lower !== undefined && upper !== undefined) return `${lower}–${upper}`;
  const words = [
    exclusiveMinimum === undefined ? undefined : `more than ${exclusiveMinimum}`,
    lower === undefined ? undefined : `at least ${lower}`,
    exclusiveMaximum === undefined ? undefined : `less than ${exclusiveMaximum}`,
    upper === undefined ? undefined : `at most ${upper}`,
  ].filter((word) => word !== undefined);
  return words.length > 0 ? words.join(", ") : undefined;
}

function sizePhrase(min: number | undefined, max: number | undefined, unit: string): string | undefined {
  const units = (n: number) => `${n} ${unit}${n === 1 ? "" : "s"}`;
  if (min !== undefined && max !== undefined) return min === max ? `exactly ${units(min)}` : `${min}–${units(max)}`;
  if (min !== undefined) return `at least ${units(min)}`;
  return max === undefined ? undefined : `at most ${units(max)}`;
}
