/**
 * The tests' one wait: it answers the first ready value, and otherwise fails naming what it
 * waited for and what the probe last saw — it never ends quietly.
 */
import { describe, expect, it } from "vitest";
import { waitFor, WaitTimeoutError } from "./wait-for.ts";

describe("waitFor", () => {
  it("answers the first value that is not undefined, null or false", async () => {
    const seen = [undefined, null, false, 0, 7];
    let i = 0;
    expect(await waitFor("a number", () => seen[i++], { intervalMs: 1 })).toBe(0);
    expect(i).toBe(4);
  });

  it("answers the first value `until` accepts", async () => {
    let n = 0;
    expect(await waitFor("three", () => ++n, { intervalMs: 1, until: (value) => value >= 3 })).toBe(3);
  });

  it("fails at its timeout naming what it waited for and the last value seen", async () => {
    let n = 0;
    const error = await waitFor("the count to reach 1000", () => ({ count: ++n }), {
      timeoutMs: 50,
      intervalMs: 5,
      until: (value) => value.count >= 1000,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect((error as Error).message).toMatch(
      /^timed out after 50 ms waiting for the count to reach 1000; the probe last returned: \{"count":\d+\}$/,
    );
    expect((error as Error).message).toContain(`{"count":${n}}`);
  });

  it("shows what `shown` picks of the last value", async () => {
    const error = await waitFor("a long list", () => [{ name: "a", big: "x".repeat(100) }], {
      timeoutMs: 10,
      intervalMs: 5,
      until: (list) => list.length > 1,
      shown: (list) => list.map((item) => item.name),
    }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/the probe last returned: \["a"\]$/);
  });

  it("ends at once on the probe's error, unless told to retry; then the timeout names the last error", async () => {
    let calls = 0;
    const broken = () => {
      calls++;
      throw new Error(`not up (${calls})`);
    };
    await expect(waitFor("a server", broken, { timeoutMs: 1_000 })).rejects.toThrow("not up (1)");
    expect(calls).toBe(1);
    await expect(waitFor("a server", broken, { timeoutMs: 30, intervalMs: 5, retryErrors: true })).rejects.toThrow(
      /^timed out after 30 ms waiting for a server; the probe last threw: Error: not up \(\d+\)$/,
    );
    expect(calls).toBeGreaterThan(2);
  });
});
