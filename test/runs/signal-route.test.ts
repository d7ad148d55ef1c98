/**
 * `POST /v1/runs/{id}/signals/{name}`: the harness sends what a script's `waitForSignal(name)`
 * waits for, without a webhook URL the script would have to mint and publish. A signal sent
 * before the script waits waits in the run's inbox, in order; the SDK and the CLI send the same;
 * a missing run is 404, an ended one 409, a bad name 400, and nothing is delivered then.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiClient } from "../../src/sdk/index.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

const key = `signals-key-${randomUUID()}`;
let stack: RewindStack;

beforeAll(async () => {
  stack = await startRewindStack({ env: { REWIND_API_KEYS: `${key}:signals-${randomUUID().slice(0, 8)}` } });
});
afterAll(async () => {
  await stack?.stop();
});

const auth = { authorization: `Bearer ${key}` };
const post = (path: string, body?: unknown) => stack.request("POST", path, body, auth);

describe("POST /v1/runs/{id}/signals/{name}", () => {
  it("delivers the body as the signal a waiting script reads, in order, with null for no body", async () => {
    const id = await startRunAs(`import { waitForSignal } from "rewind:tools";
export default async function main() {
  const first = await waitForSignal("review");
  const second = await waitForSignal("review");
  const empty = await waitForSignal("nudge");
  return { first, second, empty };
}`);
    // Both are sent at once: the second waits in the inbox until the script asks again.
    expect((await post(`/v1/runs/${id}/signals/review`, { verdict: "ok", n: 1 })).status).toBe(202);
    const answer = await post(`/v1/runs/${id}/signals/review`, ["second"]);
    expect(answer).toMatchObject({ status: 202, body: { accepted: true } });
    expect((await post(`/v1/runs/${id}/signals/nudge`)).status).toBe(202);
    const done = await waitForRun(stack, id, 30_000, auth);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toEqual({ first: { verdict: "ok", n: 1 }, second: ["second"], empty: null });
  });

  it("is sent by the SDK under a name a URL must escape", async () => {
    const id = await startRunAs(`import { waitForSignal } from "rewind:tools";
export default async function main() { return await waitForSignal("legal/approved by"); }`);
    const api = createApiClient({ url: stack.api.url, apiKey: key });
    expect(await api.signalRun(id, "legal/approved by", { by: "dana" })).toEqual({ accepted: true });
    const done = await waitForRun(stack, id, 30_000, auth);
    expect(done.result).toEqual({ by: "dana" });
  });

  it("answers 404 for a run that does not exist, 409 once the run ended, and 400 for a bad name", async () => {
    const missing = await post("/v1/runs/run_01ZZZZZZZZZZZZZZZZZZZZZZZZ/signals/review", {});
    expect([missing.status, missing.body.error?.code]).toEqual([404, "notFound"]);
    const id = await startRunAs("export default async function main() { return 1; }");
    await waitForRun(stack, id, 30_000, auth);
    const ended = await post(`/v1/runs/${id}/signals/review`, {});
    expect([ended.status, ended.body.error?.code]).toEqual([409, "conflict"]);
    expect(ended.body.error?.message).toMatch(/is completed; it can no longer receive signals/);
    const waiting = await startRunAs(`import { waitForSignal } from "rewind:tools";
export default async function main() { return await waitForSignal("review", { timeout: "2s" }); }`);
    const long = await post(`/v1/runs/${waiting}/signals/${"x".repeat(201)}`, {});
    expect([long.status, long.body.error?.code]).toEqual([400, "badRequest"]);
    // Nothing reached the run: its wait ends by its timeout.
    const timedOut = await waitForRun(stack, waiting, 30_000, auth);
    expect(timedOut.status).toBe("failed");
  });
});

async function startRunAs(script: string): Promise<string> {
  const { status, body } = await post("/v1/runs", { script });
  if (status !== 201) throw new Error(`starting the run answered ${status}: ${JSON.stringify(body)}`);
  const id = String(body.id);
  await waitFor(
    "the run to be visible",
    async () => (await stack.request("GET", `/v1/runs/${id}`, undefined, auth)).status === 200,
  );
  return id;
}
