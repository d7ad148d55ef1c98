/**
 * Which worker ran a call, as the run learns it from the call's result: the result's own `ranOn`,
 * or, when the result leaves it out because its speculative step names the same queue, that
 * step's queue. Results recorded before the step carried it keep their `ranOn`.
 */
import { describe, expect, it } from "vitest";
import { ranOnOf, type SpeculativeStep, type ToolCallResult } from "../../src/shared/index.ts";

type Ok = Extract<ToolCallResult, { ok: true }>;

const step = (sessionQueue?: string): SpeculativeStep => ({
  chain: "0123456789abcdef",
  after: [1],
  at: 1_800_000_000_000,
  result: { kind: "waiting", calls: [], logs: [], ...(sessionQueue === undefined ? {} : { sessionQueue }) },
});

describe("ranOnOf", () => {
  it("reads the result's own ranOn first, as older results recorded it", () => {
    const result: Ok = { ok: true, value: 1, attempt: 1, ranOn: "q-session-a", step: step("q-session-a") };
    expect(ranOnOf(result)).toBe("q-session-a");
  });

  it("reads the step's queue when the result leaves ranOn out", () => {
    expect(ranOnOf({ ok: true, value: 1, attempt: 1, step: step("q-session-b") })).toBe("q-session-b");
  });

  it("keeps a ranOn that differs from the step's queue", () => {
    expect(ranOnOf({ ok: true, value: 1, attempt: 1, ranOn: "q-session-c", step: step("q-session-b") })).toBe(
      "q-session-c",
    );
  });

  it("knows nothing when neither says (older and activity-only workers)", () => {
    expect(ranOnOf({ ok: true, value: 1, attempt: 1 })).toBeUndefined();
    expect(ranOnOf({ ok: true, value: 1, attempt: 1, step: step() })).toBeUndefined();
  });
});
