/**
 * The regular expressions of tool schemas (`pattern`, `patternProperties`, `propertyNames`), run
 * in linear time. A server writes the pattern and a model writes the string it is tested against,
 * and JavaScript's backtracking engine can spend minutes on one test (`^(a+)+$` against 33 `a`s
 * and a `!`), on a thread that serves everyone. RE2's engine (re2js, the pure-JavaScript port:
 * nothing to build or download at install) takes time proportional to the string, whatever the
 * pattern; it costs a few microseconds a test where a JavaScript RegExp costs under one.
 *
 * RE2 has no backreferences and no lookaround. A schema that uses them is refused at
 * registration (see `unsupportedPatterns`); a schema pinned before this rule keeps validating,
 * with each such pattern left to the server that declared it (its check here always passes).
 * The file is the only one that imports re2js.
 */
import { RE2JS } from "re2js";

/** What ajv needs of a compiled pattern: `test`, and a `toString` it keys its cache of patterns by. */
interface PatternMatcher {
  test(input: string): boolean;
  toString(): string;
}

/** Why RE2 can't run a pattern, or undefined when it can. */
function whyNotLinear(pattern: string): string | undefined {
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * ajv's `code.regExp`: compiles a schema's pattern with RE2. ajv passes its flags (`u`); RE2 reads
 * patterns as Unicode always. A pattern RE2 can't run matches everything (see the header).
 */
export const linearRegExp = Object.assign(
  (pattern: string): PatternMatcher => {
    const toString = () => `re2:${pattern}`;
    if (whyNotLinear(pattern) !== undefined) return { test: () => true, toString };
    const compiled = RE2JS.compile(pattern);
    return { test: (input: string) => compiled.matcher(input).find(), toString };
  },
  { code: "re2js" },
);

/** Keywords whose value is data, not schema: a `pattern` inside them is no pattern. */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples", "example"]);

/**
 * The patterns of a schema that RE2 can't run, each with RE2's reason: `pattern` values,
 * `patternProperties` keys, wherever they sit in the schema (definitions included).
 */
export function unsupportedPatterns(schema: unknown): { pattern: string; reason: string }[] {
  const found: { pattern: string; reason: string }[] = [];
  const seen = new Set<string>();
  const check = (pattern: string) => {
    if (seen.has(pattern)) return;
    seen.add(pattern);
    const reason = whyNotLinear(pattern);
    if (reason !== undefined) found.push({ pattern, reason });
  };
  const walk = (node: unknown, depth: number) => {
    if (depth > 64 || node === null || typeof node !== "object") return;
    if (Array.isArray(node)) {
      for (const item of node) walk(item, depth + 1);
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      if (DATA_KEYWORDS.has(key)) continue;
      if (key === "pattern" && typeof value === "string") check(value);
      else if (key === "patternProperties" && value !== null && typeof value === "object" && !Array.isArray(value)) {
        for (const [pattern, sub] of Object.entries(value)) {
          check(pattern);
          walk(sub, depth + 1);
        }
      } else if (key === "properties" && value !== null && typeof value === "object" && !Array.isArray(value)) {
        // Property names are data: a property called "pattern" holds a schema, walked as one.
        for (const sub of Object.values(value)) walk(sub, depth + 1);
      } else walk(value, depth + 1);
    }
  };
  walk(schema, 0);
  return found;
}
