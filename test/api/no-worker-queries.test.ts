/**
 * Reads only a worker can answer (a run's journal, its cassette) while no worker serves the
 * run's queue: the API answers 503 `unavailable` naming the run within its bounded wait, instead
 * of holding the request until Temporal gives up and reporting an internal error. What Temporal
 * answers alone (the run's own view) still answers, and the reads work again once a worker is back.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { JOURNAL_QUERY_TIMEOUT_MS } from "../../src/api/worker-query.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { testWorkers } from "../helpers/test-worker.ts";
import { startRun } from "../helpers/toolset.ts";

let stack: RewindStack;
const workers = testWorkers();

beforeAll(async () => {
  stack = await startRewindStack();
});
afterAll(async () => {
  await workers.stopAll();
  await stack?.stop();
});

it("answers 503 unavailable for a run's journal and cassette while no worker serves its queue", async () => {
  const id = await startRun(stack, { script: "export default async () => 42;" });
  expect(await waitForRun(stack, id)).toMatchObject({ status: "completed", result: 42 });
  await stack.worker?.shutdown();

  // Both at once: each waits out the query's bound on its own.
  await Promise.all(
    [`/v1/runs/${id}/journal`, `/v1/runs/${id}/cassette`].map(async (route) => {
      const started = Date.now();
      const answer = await stack.request("GET", route);
      const waited = Date.now() - started;
      expect([answer.status, answer.body.error?.code], route).toEqual([503, "unavailable"]);
      expect(answer.body.error?.message).toBe(`no worker answered for run ${id}; try again`);
      expect(waited, route).toBeGreaterThanOrEqual(JOURNAL_QUERY_TIMEOUT_MS - 100);
      expect(waited, route).toBeLessThan(JOURNAL_QUERY_TIMEOUT_MS + 5_000);
    }),
  );
  // The run itself is read from Temporal alone.
  const view = await stack.request("GET", `/v1/runs/${id}`);
  expect([view.status, view.body["status"]]).toEqual([200, "completed"]);

  await workers.start(stack, { identity: "back" });
  const journal = await stack.request("GET", `/v1/runs/${id}/journal`);
  expect(journal.status, JSON.stringify(journal.body)).toBe(200);
  expect(journal.body["entries"]).toEqual([]);
  const cassette = await stack.request("GET", `/v1/runs/${id}/cassette`);
  expect([cassette.status, cassette.body["runId"]]).toEqual([200, id]);
}, 90_000);
