/**
 * Progress coalescing: a call's progress reports become at most one send per interval per call,
 * the last value offered is always sent, calls don't hold each other back, a failing send never
 * throws at the reporter, and a key's state is gone once it has been idle for an interval.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createProgressCoalescer } from "../../src/activities/progress-coalescer.ts";

let sent: { key: string; value: number; at: number }[];

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
  sent = [];
});
afterEach(() => {
  vi.useRealTimers();
});

const recorder = async (key: string, value: number) => {
  sent.push({ key, value, at: Date.now() });
};

describe("progress coalescer", () => {
  it("flush sends the pending value at once, so it is there before the call's result", async () => {
    const coalescer = createProgressCoalescer(recorder, 1000);
    coalescer.offer("a", 1);
    coalescer.offer("a", 2);
    await coalescer.flush("a");
    expect(sent).toEqual([
      { key: "a", value: 1, at: 0 },
      { key: "a", value: 2, at: 0 },
    ]);
    await coalescer.flush("a");
    await coalescer.flush("unknown");
    expect(sent).toHaveLength(2);
  });

  it("sends the first report at once and the last of a burst one interval later", async () => {
    const coalescer = createProgressCoalescer(recorder, 1000);
    for (let i = 1; i <= 50; i++) coalescer.offer("a", i);
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual([{ key: "a", value: 1, at: 0 }]);
    await vi.advanceTimersByTimeAsync(999);
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent).toEqual([
      { key: "a", value: 1, at: 0 },
      { key: "a", value: 50, at: 1000 },
    ]);
  });

  it("never sends more than one report per interval, however they come, and ends on the last", async () => {
    const coalescer = createProgressCoalescer(recorder, 1000);
    for (let t = 0; t < 10_000; t += 50) {
      coalescer.offer("a", t);
      await vi.advanceTimersByTimeAsync(50);
    }
    await vi.advanceTimersByTimeAsync(2000);
    const times = sent.map((s) => s.at);
    for (let i = 1; i < times.length; i++) expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(1000);
    expect(sent.length).toBeGreaterThanOrEqual(9);
    expect(sent.length).toBeLessThanOrEqual(11);
    expect(sent.at(-1)?.value).toBe(9950);
  });

  it("keeps calls apart: each key has its own interval", async () => {
    const coalescer = createProgressCoalescer(recorder, 1000);
    coalescer.offer("a", 1);
    coalescer.offer("b", 1);
    coalescer.offer("a", 2);
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.map((s) => `${s.key}${s.value}`)).toEqual(["a1", "b1"]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(sent.map((s) => `${s.key}${s.value}`)).toEqual(["a1", "b1", "a2"]);
  });

  it("waits for a slow send before the next, and still delivers the last value", async () => {
    const releases: (() => void)[] = [];
    const slow = (key: string, value: number) =>
      new Promise<void>((resolve) => {
        sent.push({ key, value, at: Date.now() });
        releases.push(resolve);
      });
    const coalescer = createProgressCoalescer(slow, 1000);
    coalescer.offer("a", 1);
    coalescer.offer("a", 2);
    await vi.advanceTimersByTimeAsync(3000);
    expect(sent.map((s) => s.value)).toEqual([1]);
    coalescer.offer("a", 3);
    releases[0]?.();
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.map((s) => s.value)).toEqual([1, 3]);
  });

  it("swallows failed sends, goes on with later reports, and forgets idle keys", async () => {
    let fail = true;
    const flaky = async (key: string, value: number) => {
      sent.push({ key, value, at: Date.now() });
      if (fail) throw new Error("the run is gone");
    };
    const coalescer = createProgressCoalescer(flaky, 1000);
    expect(() => coalescer.offer("a", 1)).not.toThrow();
    await vi.advanceTimersByTimeAsync(0);
    fail = false;
    coalescer.offer("a", 2);
    await vi.advanceTimersByTimeAsync(1000);
    expect(sent.map((s) => s.value)).toEqual([1, 2]);
    expect(coalescer.size).toBe(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(coalescer.size).toBe(0);
    coalescer.offer("a", 3);
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.map((s) => s.value)).toEqual([1, 2, 3]);
  });
});
