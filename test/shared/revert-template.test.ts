/**
 * The revert template: exact placeholders take the original call's values with their JSON
 * types, literals stay as written, nested values are walked, and anything else (interpolation,
 * other sources, bad segments, placeholders as keys) is a problem named where it stands.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkTemplate, fillTemplate, parsePlaceholder, placeholdersOf } from "../../src/shared/index.ts";

const CHARGE_REFUND = { chargeId: "{{result.id}}", amount: "{{args.amount}}", reason: "rollback" };

describe("fillTemplate", () => {
  it("takes values with their JSON types and keeps literals", () => {
    const filled = fillTemplate(
      { ...CHARGE_REFUND, lines: ["{{result.lines.1}}", 3, null, true], meta: { whole: "{{args}}" } },
      { args: { amount: 12.5, currency: "EUR" }, result: { id: "ch_1", lines: [{ n: 1 }, { n: 2 }] } },
    );
    expect(filled).toEqual({
      ok: true,
      value: {
        chargeId: "ch_1",
        amount: 12.5,
        reason: "rollback",
        lines: [{ n: 2 }, 3, null, true],
        meta: { whole: { amount: 12.5, currency: "EUR" } },
      },
    });
  });

  it("allows spaces inside the braces", () => {
    expect(fillTemplate({ id: "{{ result.id }}" }, { args: {}, result: { id: 7 } })).toEqual({
      ok: true,
      value: { id: 7 },
    });
  });

  it("fails naming the placeholder and where its path stopped", () => {
    expect(fillTemplate(CHARGE_REFUND, { args: { amount: 1 }, result: { charge: "ch_1" } })).toEqual({
      ok: false,
      reason: '{{result.id}}: result has no "id"',
    });
    expect(fillTemplate({ x: "{{result.a.b}}" }, { args: {}, result: { a: "text" } })).toEqual({
      ok: false,
      reason: '{{result.a.b}}: result.a has no "b"',
    });
    expect(fillTemplate({ x: "{{result.5}}" }, { args: {}, result: [1, 2] })).toEqual({
      ok: false,
      reason: '{{result.5}}: result has no "5"',
    });
    expect(fillTemplate({ x: "{{result}}" }, { args: {}, result: undefined })).toEqual({
      ok: false,
      reason: "{{result}}: result is missing",
    });
  });

  it("reads own properties only, and keeps a literal __proto__ key a key", () => {
    expect(fillTemplate({ x: "{{args.constructor}}" }, { args: {}, result: null })).toMatchObject({ ok: false });
    expect(fillTemplate({ x: "{{args.toString}}" }, { args: { a: 1 }, result: null })).toMatchObject({ ok: false });
    const filled = fillTemplate(JSON.parse('{"__proto__": {"polluted": "{{args.a}}"}}'), {
      args: { a: 1 },
      result: null,
    });
    expect(filled.ok).toBe(true);
    const value = (filled as { value: Record<string, unknown> }).value;
    expect(Object.keys(value)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  const json = fc.jsonValue({ maxDepth: 4 });
  const literal = json.filter(
    (value) => !JSON.stringify(value).includes("{{") && !JSON.stringify(value).includes("}}"),
  );

  it("leaves any template without placeholders as it is", () => {
    fc.assert(
      fc.property(literal, json, json, (template, args, result) => {
        expect(fillTemplate(template, { args, result })).toEqual({ ok: true, value: template });
        expect(checkTemplate(template)).toEqual([]);
      }),
    );
  });

  /** A value, and a path into it with the value found there. */
  const pathInto = (value: unknown): fc.Arbitrary<{ path: string[]; found: unknown }> => {
    const entries: { path: string[]; found: unknown }[] = [];
    const walk = (v: unknown, path: string[]): void => {
      if (v === undefined) return;
      entries.push({ path, found: v });
      if (Array.isArray(v)) v.forEach((item, i) => walk(item, [...path, String(i)]));
      else if (typeof v === "object" && v !== null)
        for (const [key, item] of Object.entries(v))
          if (/^[A-Za-z0-9_$-]+$/.test(key) && !/^\d/.test(key)) walk(item, [...path, key]);
    };
    walk(value, []);
    return fc.constantFrom(...entries);
  };

  it("gives every placeholder the value its path leads to", () => {
    const keyed = fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,5}$/), json, { maxKeys: 5 });
    fc.assert(
      fc.property(
        keyed.chain((result) => pathInto(result).map((p) => ({ result, ...p }))),
        fc.stringMatching(/^[a-z]{1,6}$/),
        ({ result, path, found }, key) => {
          const text = `{{${["result", ...path].join(".")}}}`;
          expect(checkTemplate({ [key]: text })).toEqual([]);
          expect(fillTemplate({ [key]: [text] }, { args: null, result })).toEqual({
            ok: true,
            value: { [key]: [found] },
          });
        },
      ),
    );
  });
});

describe("checkTemplate", () => {
  it("refuses interpolation, other sources, bad segments and placeholders as keys, each where it stands", () => {
    expect(
      checkTemplate({
        note: "refund of {{args.amount}}",
        who: "{{input.user}}",
        deep: [{ x: "{{result.a..b}}" }],
        "{{args.k}}": 1,
      }),
    ).toEqual([
      {
        at: "args.note",
        message: "a placeholder must be the whole string, exactly {{args.path}} or {{result.path}}",
      },
      { at: "args.who", message: 'placeholders refer to args or result, not "input"' },
      {
        at: "args.deep.0.x",
        message: '"" is not a path segment (letters, digits, _, $ and - between dots)',
      },
      { at: "args.{{args.k}}", message: "keys are literal: a placeholder can only be a value" },
    ]);
  });

  it("refuses what is not JSON, too deep or too large", () => {
    expect(checkTemplate(undefined)).toEqual([{ at: "args", message: "must be JSON" }]);
    let deep: unknown = "{{args.a}}";
    for (let i = 0; i < 20; i++) deep = [deep];
    expect(checkTemplate(deep)[0]?.message).toBe("nests deeper than 16 levels");
    expect(checkTemplate({ big: "x".repeat(20_000) })[0]?.message).toMatch(/more than 16384/);
  });

  it("lists the placeholders with where they stand", () => {
    expect(placeholdersOf(CHARGE_REFUND)).toEqual([
      { at: ["chargeId"], placeholder: { source: "result", path: ["id"] } },
      { at: ["amount"], placeholder: { source: "args", path: ["amount"] } },
    ]);
    expect(parsePlaceholder("rollback")).toBeUndefined();
  });
});
