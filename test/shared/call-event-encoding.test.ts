/**
 * A call's event is serialized from its value's JSON when the activity already made it (for the
 * result's size): the text must be exactly what `JSON.stringify` of the whole event gives, or a
 * speculative step would feed the script something a replay would not.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodeCallEvent } from "../../src/shared/journal.ts";

describe("encodeCallEvent", () => {
  it("gives JSON.stringify of the event for any JSON value", () => {
    fc.assert(
      fc.property(fc.nat(), fc.jsonValue(), (seq, value) => {
        const expected = JSON.stringify({ seq, ok: true, value });
        expect(encodeCallEvent(seq, value, JSON.stringify(value))).toBe(expected);
        expect(JSON.parse(encodeCallEvent(seq, value, JSON.stringify(value)))).toEqual(JSON.parse(expected));
      }),
      { numRuns: 500 },
    );
  });

  it("gives it for values JSON changes or leaves out: undefined, -0, NaN, lone surrogates, a large string", () => {
    for (const value of [
      undefined,
      null,
      -0,
      Number.NaN,
      "\ud800",
      'a"b\\c\n\u0001',
      "x".repeat(1 << 20),
      { a: undefined },
    ]) {
      expect(encodeCallEvent(7, value, JSON.stringify(value))).toBe(JSON.stringify({ seq: 7, ok: true, value }));
    }
  });
});
