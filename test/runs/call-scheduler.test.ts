import { describe, expect, it } from "vitest";
import type { JournalEntry } from "../../src/shared/journal.ts";
import { CallScheduler } from "../../src/workflows/run/call-scheduler.ts";

const entry = (seq: number, tool: string): JournalEntry =>
  ({ seq, tool, args: {}, status: "pending", issuedAt: 0, attempts: 0 }) as JournalEntry;

describe("CallScheduler", () => {
  it("holds calls to the run-wide and per-tool limits and starts the next one as a call is released", () => {
    const started: number[] = [];
    const releases = new Map<number, () => void>();
    const scheduler = new CallScheduler(
      3,
      (tool) => (tool === "svc.slow" ? 1 : 3),
      (call, release) => {
        started.push(call.seq);
        releases.set(call.seq, release);
      },
    );
    scheduler.enqueue(entry(1, "svc.slow"));
    scheduler.enqueue(entry(2, "svc.slow"));
    scheduler.enqueue(entry(3, "svc.fast"));
    scheduler.enqueue(entry(4, "svc.fast"));
    scheduler.enqueue(entry(5, "svc.fast"));
    // seq 2 waits for seq 1 (tool limit 1); 3 and 4 fill the run-wide limit of 3.
    expect(started).toEqual([1, 3, 4]);
    expect(scheduler.inFlight).toBe(3);
    expect(scheduler.queued).toBe(2);
    releases.get(3)?.();
    // A fast call's place goes to the next call that may start: 2 still waits for 1.
    expect(started).toEqual([1, 3, 4, 5]);
    releases.get(1)?.();
    // The slow tool is free again, and so is a place in the run.
    expect(started).toEqual([1, 3, 4, 5, 2]);
    expect(scheduler.queued).toBe(0);
    expect(scheduler.inFlight).toBe(3);
  });

  it("starts nothing new once paused", () => {
    const started: number[] = [];
    const releases: (() => void)[] = [];
    const scheduler = new CallScheduler(
      1,
      () => 1,
      (call, release) => {
        started.push(call.seq);
        releases.push(release);
      },
    );
    scheduler.enqueue(entry(1, "svc.a"));
    scheduler.enqueue(entry(2, "svc.b"));
    scheduler.pause();
    releases[0]?.();
    expect(started).toEqual([1]);
    expect(scheduler.inFlight).toBe(0);
    expect(scheduler.queued).toBe(1);
  });
});
