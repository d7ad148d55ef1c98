/**
 * A failed run reads as a type from RUN_FAILURE_TYPES on the API, whatever it failed with: its
 * own typed failure as it is, and an untyped one (runs that failed on an error of Rewind's own
 * before those were typed) as RunBroken, keeping the type it was recorded with.
 */
import { ActivityFailure, ApplicationFailure, RetryState } from "@temporalio/common";
import { describe, expect, it } from "vitest";
import { runFailureOf } from "../../src/api/run-failure.ts";
import { RUN_FAILURE_TYPES } from "../../src/shared/run.ts";

describe("runFailureOf", () => {
  it("keeps a run's typed failure and its details", () => {
    const failure = ApplicationFailure.create({
      type: RUN_FAILURE_TYPES.limitExceeded,
      message: "RangeError: CPU time limit",
      details: [{ name: "RangeError", message: "CPU time limit", limit: "cpu" }],
    });
    expect(runFailureOf(failure, "Workflow execution failed")).toEqual({
      type: "LimitExceeded",
      message: "RangeError: CPU time limit",
      details: { name: "RangeError", message: "CPU time limit", limit: "cpu" },
    });
  });

  it("reads an untyped ApplicationFailure as RunBroken", () => {
    expect(runFailureOf(ApplicationFailure.nonRetryable("the sandbox refused a cold start"), "failed")).toEqual({
      type: "RunBroken",
      message: "the sandbox refused a cold start",
      details: { recordedType: "Error" },
    });
  });

  it("reads an ActivityFailure as RunBroken naming the activity and its cause", () => {
    const cause = ApplicationFailure.create({ type: "TypeError", message: "boom" });
    const failure = new ActivityFailure(
      "Activity task failed",
      "advanceScript",
      "1",
      RetryState.MAXIMUM_ATTEMPTS_REACHED,
      "worker",
      cause,
    );
    expect(runFailureOf(failure, "failed")).toEqual({
      type: "RunBroken",
      message: "advanceScript: boom",
      details: { recordedType: "ActivityFailure" },
    });
  });

  it("reads a failure without a cause as RunBroken with the workflow's message", () => {
    expect(runFailureOf(undefined, "Workflow execution failed")).toMatchObject({
      type: "RunBroken",
      message: "Workflow execution failed",
    });
  });
});
