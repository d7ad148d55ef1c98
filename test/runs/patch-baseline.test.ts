/**
 * A new run records one patch marker, the newest release baseline, and follows every change
 * declared before it (the first baseline and the changes after it included): Temporal's core follows each patch marker with an upsert of `TemporalChangeVersion`,
 * so a marker per change cost every run two events and a visibility write per change before its
 * first call. Its history replays, and it still follows those changes without asking for them
 * again (the rest of the suite runs new runs, so every covered change's behaviour is tested there).
 */
import path from "node:path";
import type { temporal } from "@temporalio/proto";
import { Worker } from "@temporalio/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PATCHES } from "../../src/workflows/run/patches.ts";
import { loadWorkflowBundle } from "../../src/worker/workflow-bundle.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { REPLAY_SINKS } from "../../src/worker/index.ts";

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

let stack: RewindStack;

beforeAll(async () => {
  stack = await startRewindStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** The ids of the patch markers in a history, in order. */
function patchMarkers(events: HistoryEvent[]): string[] {
  const ids: string[] = [];
  for (const event of events) {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== "core_patch") continue;
    // The marker's details are core's: each value a JSON payload, the patch id among them.
    const texts = Object.values(marker.details ?? {}).flatMap((payloads) =>
      (payloads.payloads ?? []).map((p) => Buffer.from(p.data ?? new Uint8Array()).toString("utf8")),
    );
    ids.push(texts.find((text) => text.includes("rewind-"))?.match(/rewind-[\w-]+/)?.[0] ?? JSON.stringify(texts));
  }
  return ids;
}

describe("the release baseline", () => {
  it("gives a new run one patch marker and one TemporalChangeVersion upsert, and its history replays", async () => {
    const started = await stack.request("POST", "/v1/runs", {
      script: "export default async (input: { n: number }) => input.n * 2",
      input: { n: 21 },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const id = String(started.body.id);
    const done = await waitForRun(stack, id);
    expect(done.status).toBe("completed");
    expect(done.result).toBe(42);
    const history = await stack.client.workflow.getHandle(id).fetchHistory();
    const events = history.events ?? [];
    expect(patchMarkers(events)).toEqual([PATCHES.releaseBaseline5]);
    const upserts = events.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes);
    const changeVersions = upserts.filter(
      (e) =>
        e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.["TemporalChangeVersion"],
    );
    expect(changeVersions).toHaveLength(1);
    const bundle = await loadWorkflowBundle(path.join(stack.config.stateDir, "cache"));
    await expect(
      Worker.runReplayHistory({ workflowBundle: bundle, sinks: REPLAY_SINKS }, history, id),
    ).resolves.toBeUndefined();
  });

  it("asks no other marker at a run's end: a cancelled run follows the covered ending (status cancelled) with the baseline's marker alone", async () => {
    const started = await stack.request("POST", "/v1/runs", {
      script:
        'import { waitForSignal } from "rewind:tools";\nexport default async () => { await waitForSignal("go"); return 1; }',
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const id = String(started.body.id);
    const handle = stack.client.workflow.getHandle(id);
    await waitFor(
      "the run waiting for its signal",
      async () => (await stack.request("GET", `/v1/runs/${id}/journal`)).body,
      { until: (body) => JSON.stringify(body["entries"] ?? []).includes("rewind.waitForSignal") },
    );
    const cancelled = await stack.request("POST", `/v1/runs/${id}/cancel`);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBeLessThan(300);
    const done = await waitForRun(stack, id);
    // Before oneWayToEnd a cancelled run's status was left at running.
    expect(done.status).toBe("cancelled");
    expect(patchMarkers((await handle.fetchHistory()).events ?? [])).toEqual([PATCHES.releaseBaseline5]);
  });
});
