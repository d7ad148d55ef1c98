/**
 * How the renderings write a schema's notes (schema-notes.ts). The prompt puts them in words
 * after an argument's description, `- limit: At most this many notes (1–50, default 10)`; the
 * .d.ts puts them as JSDoc tags under the property's description (`@minimum 1`): the keywords'
 * own names, as JSON-Schema-to-TypeScript generators write them and editors show them.
 */
import { CONSTRAINT_KEYWORDS } from "./schema-notes.ts";
import type { Constraints, SchemaNotes } from "./schema-notes.ts";

/** The prompt's words for a property's constraints and default, a part each: `1–50`, `default 10`. */
function constraintParts(c: Constraints): string[] {
  const parts = [
    rangePhrase(c),
    sizePhrase(c.minLength, c.maxLength, "character"),
    sizePhrase(c.minItems, c.maxItems, "item"),
    c.pattern === undefined ? undefined : `pattern ${c.pattern}`,
    c.format === undefined ? undefined : `format ${c.format}`,
    c.default === undefined ? undefined : `default ${c.default}`,
  ];
  return parts.filter((part) => part !== undefined);
}

/**
 * A description (whitespace already folded, bounded) and its constraints, as one line of the
 * prompt: `At most this many notes (1–50, default 10)`. A part the description already says in
 * the same words is not said again (`Include finished tasks too (default false).`).
 */
export function describedLine(description: string, c: Constraints): string {
  const said = description.toLowerCase();
  const parts = constraintParts(c).filter((part) => {
    const words = part.toLowerCase();
    return !mentions(said, words) && !mentions(said, words.replaceAll("–", "-"));
  });
  if (parts.length === 0) return description;
  return description ? `${description} (${parts.join(", ")})` : `(${parts.join(", ")})`;
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

/** Whether `text` holds `phrase` as words of their own: `default 1` is not in `default 10` or `default 1.5`. */
function mentions(text: string, phrase: string): boolean {
  for (let at = text.indexOf(phrase); at >= 0; at = text.indexOf(phrase, at + 1)) {
    const end = at + phrase.length;
    const after = text.charAt(end);
    const joined =
      /\w/.test(text.charAt(at - 1)) || /\w/.test(after) || (after === "." && /\d/.test(text.charAt(end + 1)));
    if (!joined) return true;
  }
  return false;
}
