/**
 * Schema patterns run in linear time: a pattern that backtracks exponentially on JavaScript's
 * engine answers at once on RE2, in `pattern`, `patternProperties` and `propertyNames` alike, and
 * still means what it says; a pattern RE2 can't run (lookaround, backreferences) is refused at
 * registration (`unsupportedPattern`) while a schema pinned before that rule keeps validating
 * everything else. The time bound is behaviour, not performance: the hostile string takes about
 * 2^40 steps on a backtracking engine (hours), on RE2 a few microseconds.
 */
import { describe, expect, it } from "vitest";
import { schemaProblem, validateAgainstSchema } from "../../src/schemas/index.ts";
import type { JsonSchema } from "../../src/shared/toolset.ts";

const EVIL = "^(a+)+$";
const attack = (n: number) => `${"a".repeat(n)}!`;

/** Milliseconds `work` took. */
function timed(work: () => void): number {
  const began = performance.now();
  work();
  return performance.now() - began;
}

describe("a backtracking pattern", () => {
  it("answers at once on RE2 in pattern, patternProperties and propertyNames, and still matches", () => {
    const schemas: JsonSchema[] = [
      { type: "object", properties: { email: { type: "string", pattern: EVIL } } },
      { type: "object", patternProperties: { [EVIL]: { type: "number" } } },
      { type: "object", propertyNames: { pattern: EVIL } },
    ];
    const hostile = attack(40); // 2^40 steps on a backtracking engine
    const [byPattern, byPatternProperties, byPropertyNames] = schemas as [JsonSchema, JsonSchema, JsonSchema];
    const elapsed = timed(() => {
      expect(validateAgainstSchema(byPattern, { email: hostile })?.message).toMatch(/must match pattern/);
      expect(validateAgainstSchema(byPatternProperties, { [hostile]: "x" })).toBeUndefined();
      expect(validateAgainstSchema(byPropertyNames, { [hostile]: 1 })?.message).toMatch(/property name must be valid/);
    });
    expect(elapsed).toBeLessThan(2_000);
    expect(validateAgainstSchema(byPattern, { email: "aaaa" })).toBeUndefined();
    expect(validateAgainstSchema(byPatternProperties, { aaa: "x" })?.message).toMatch(/must be number/);
    for (const schema of schemas) expect(schemaProblem(schema)).toBeUndefined();
  });

  it("keeps a JSON Schema pattern's meaning: unanchored search, classes, Unicode", () => {
    const schema: JsonSchema = { type: "string", pattern: "\\d{3}-\\d{4}" };
    expect(validateAgainstSchema(schema, "call 555-1234 now")).toBeUndefined();
    expect(validateAgainstSchema(schema, "555-12")?.message).toMatch(/must match pattern/);
    const letters: JsonSchema = { type: "string", pattern: "^\\p{L}+$" };
    expect(validateAgainstSchema(letters, "Grüße")).toBeUndefined();
    expect(validateAgainstSchema(letters, "a1")?.message).toMatch(/must match pattern/);
  });
});

describe("a pattern RE2 can't run", () => {
  const lookahead: JsonSchema = {
    type: "object",
    properties: {
      password: { type: "string", pattern: "^(?=.*\\d).{8,}$" },
      size: { type: "integer", maximum: 10 },
    },
  };

  it("is refused at registration, naming the pattern and RE2's reason", () => {
    expect(schemaProblem(lookahead)).toEqual({
      reason: "unsupportedPattern",
      message: expect.stringMatching(/RE2.*"\^\(\?=\.\*\\\\d\)\.\{8,\}\$" \(.*\(\?=/),
    });
    expect(schemaProblem({ type: "string", pattern: "(a)\\1" })?.reason).toBe("unsupportedPattern");
    expect(schemaProblem({ type: "object", patternProperties: { "^(?!x)": {} } })?.reason).toBe("unsupportedPattern");
  });

  it("is left to the server in a schema pinned before the rule: the rest still validates", () => {
    expect(validateAgainstSchema(lookahead, { password: "no digits here", size: 3 })).toBeUndefined();
    expect(validateAgainstSchema(lookahead, { password: "x", size: 11 })?.message).toMatch(
      /arguments\/size must be <= 10/,
    );
  });

  it("is no pattern where it is data: a property named pattern, a const, an enum", () => {
    const schema: JsonSchema = {
      type: "object",
      properties: { pattern: { type: "string" }, mode: { const: { pattern: "(?=x)" } } },
      examples: [{ pattern: "(?=y)" }],
    };
    expect(schemaProblem(schema)).toBeUndefined();
  });
});
