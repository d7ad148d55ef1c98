/** The bench's history summary over several runs: each figure the median of the runs', so one odd run does not speak for the rest. */
import { describe, expect, it } from "vitest";
import { medianHistory, type HistorySummary } from "../../bench/history.ts";

function summary(spanMs: number, headMs: number, workflowTasks: number): HistorySummary {
  return {
    executions: 1,
    events: workflowTasks * 3,
    eventsPerExecution: [workflowTasks * 3],
    startInputBytes: [100],
    byType: { workflowTaskCompleted: workflowTasks },
    payloadBytes: spanMs * 10,
    phases: {
      activityScheduleToStart: 1,
      activityStartToClose: spanMs / 2,
      workflowTaskScheduleToStart: 2,
      workflowTaskStartToClose: headMs,
    },
    workflowTasks,
    spanMs,
    headMs,
    tailMs: headMs / 2,
  };
}

describe("medianHistory", () => {
  it("takes each figure's median over the runs and the counts by type of the median run", () => {
    const runs = [
      summary(300, 90, 12),
      summary(100, 10, 10),
      summary(200, 20, 11),
      summary(250, 30, 9),
      summary(150, 15, 8),
    ];
    const merged = medianHistory(runs);
    expect(merged.spanMs).toBe(200);
    expect(merged.headMs).toBe(20);
    expect(merged.tailMs).toBe(10);
    expect(merged.workflowTasks).toBe(10);
    expect(merged.phases.workflowTaskStartToClose).toBe(20);
    expect(merged.phases.activityStartToClose).toBe(100);
    expect(merged.byType).toEqual({ workflowTaskCompleted: 11 });
  });

  it("refuses an empty list of runs", () => {
    expect(() => medianHistory([])).toThrow(/no runs/);
  });
});
