/**
 * Eager start, as `npm start` runs the stack: the API shares the worker's connection and asks
 * Temporal to hand a new run's first workflow task back in the start's answer. Runs must start
 * eagerly there and behave as any other run (an idempotent repeat included); a stack whose API has
 * its own connection starts them the ordinary way.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseExposition, valueOf } from "../helpers/prometheus-text.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";

let eager: RewindStack;
let queued: RewindStack;

beforeAll(async () => {
  eager = await startRewindStack({ eagerStart: true });
  queued = await startRewindStack();
}, 120_000);

afterAll(async () => {
  await eager?.stop();
  await queued?.stop();
});

const SCRIPT = "export default async (i: { n: number }) => i.n * 2";

async function starts(stack: RewindStack, start: "eager" | "queued"): Promise<number> {
  return valueOf(parseExposition(await stack.metrics.scrape()), "rewind_api_run_starts_total", { start });
}

describe("eager start", () => {
  it("starts runs eagerly when the API shares the worker's connection, and they complete", async () => {
    const before = { eager: await starts(eager, "eager"), queued: await starts(eager, "queued") };
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) {
      const { status, body } = await eager.request("POST", "/v1/runs", { script: SCRIPT, input: { n } });
      expect(status).toBe(201);
      ids.push(String(body.id));
    }
    const done = await Promise.all(ids.map((id) => waitForRun(eager, id)));
    expect(done.map((run) => run.result)).toEqual([0, 2, 4, 6, 8]);
    expect(await starts(eager, "eager")).toBe(before.eager + 5);
    expect(await starts(eager, "queued")).toBe(before.queued);
  });

  it("answers an idempotent repeat with the run the first start made, counted once", async () => {
    const before = await starts(eager, "eager");
    const request = { script: SCRIPT, input: { n: 50 } };
    const headers = { "Idempotency-Key": `eager-${Date.now()}` };
    const first = await eager.request("POST", "/v1/runs", request, headers);
    const repeat = await eager.request("POST", "/v1/runs", request, headers);
    expect(first.status).toBe(201);
    expect(repeat.status).toBe(200);
    expect(repeat.body.id).toBe(first.body.id);
    expect((await waitForRun(eager, String(first.body.id))).result).toBe(100);
    expect(await starts(eager, "eager")).toBe(before + 1);
  });

  it("starts runs the ordinary way when the API has a connection of its own", async () => {
    const { body } = await queued.request("POST", "/v1/runs", { script: SCRIPT, input: { n: 4 } });
    expect((await waitForRun(queued, String(body.id))).result).toBe(8);
    expect(await starts(queued, "queued")).toBe(1);
    expect(await starts(queued, "eager")).toBe(0);
  });
});
