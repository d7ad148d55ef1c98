/**
 * A run described as parked is shown from its status query, asked just after: a call held for a
 * server's question goes back to running when its attempt ends, and a run whose last parked call
 * did so in between was shown `parked` with `parked: []`. It is shown running now.
 */
import { describe, expect, it } from "vitest";
import { parkedView } from "../../src/api/run-reads.ts";
import type { RunStatus } from "../../src/shared/index.ts";

const status = (state: RunStatus["state"], parked: RunStatus["parked"] = []): RunStatus => ({
  state,
  calls: { total: 1, inFlight: 1 },
  parked,
});

describe("a run described as parked", () => {
  it("lists its parked calls while the run still says it is parked", () => {
    const parked = [{ seq: 1, tool: "tools.echo", args: {}, reason: "approval" }];
    expect(parkedView(status("parked", parked))).toEqual({ status: "parked", parked });
  });

  it("is running, with no parked list, when its last parked call went back to running before the query", () => {
    expect(parkedView(status("running"))).toEqual({ status: "running" });
  });

  it("stays parked, its calls unlisted, when no worker answered the query", () => {
    expect(parkedView(undefined)).toEqual({ status: "parked" });
  });

  it("carries the script's approval when that is what it waits for", () => {
    const scriptApproval = { state: "waiting" } as unknown as NonNullable<RunStatus["scriptApproval"]>;
    expect(parkedView({ ...status("parked"), scriptApproval })).toEqual({
      status: "parked",
      parked: [],
      scriptApproval,
    });
  });
});
