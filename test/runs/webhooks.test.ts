/**
 * webhook(name) and waitForSignal: the URL a script gets is bound to its run; what is posted to
 * it reaches waitForSignal in order, even when posted before the script waits; a forged token
 * is refused without touching the run; a wait with a timeout ends in ToolError(timedOut).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
beforeAll(async () => {
  stack = await startRewindStack();
});
afterAll(async () => {
  await stack?.stop();
});

function webhookUrl(id: string): Promise<string> {
  return waitFor(
    `run ${id}'s webhook URL`,
    async () => {
      const journal = await stack.request("GET", `/v1/runs/${id}/journal`);
      const entries = (journal.body["entries"] ?? []) as { tool: string; status: string; result?: { url: string } }[];
      return entries.find((e) => e.tool === "rewind.webhook" && e.status === "completed")?.result?.url;
    },
    { timeoutMs: 10_000 },
  );
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("webhooks and signals", () => {
  it("turns posts to the run's URL into signals, keeping those sent before the wait, in order", async () => {
    const id = await startRun(stack, {
      script: `import { webhook, waitForSignal, sleep } from "rewind:tools";
export default async function main() {
  const { url } = await webhook("payment");
  await sleep("2s");
  const first = await waitForSignal<{ n: number }>("payment");
  const second = await waitForSignal<{ n: number }>("payment");
  return { url, got: [first.n, second.n] };
}`,
    });
    const url = await webhookUrl(id);
    expect(url).toMatch(new RegExp(`/v1/hooks/${id}/payment\\?token=[A-Za-z0-9_-]{43}$`));
    const hookUrl = new URL(url);
    const local = `${stack.api.url}${hookUrl.pathname}${hookUrl.search}`;

    const forged = `${stack.api.url}${hookUrl.pathname}?token=${"A".repeat(43)}`;
    expect((await post(forged, { n: 666 })).status).toBe(404);
    expect((await post(`${stack.api.url}${hookUrl.pathname}`, { n: 666 })).status).toBe(404);
    const otherName = `${stack.api.url}/v1/hooks/${id}/refund${hookUrl.search}`;
    expect((await post(otherName, { n: 666 })).status).toBe(404);

    expect((await post(local, { n: 1 })).status).toBe(202);
    expect((await post(local, { n: 2 })).status).toBe(202);
    const done = await waitForRun(stack, id);
    expect(done.result).toEqual({ url, got: [1, 2] });
    expect((await post(local, { n: 3 })).status).toBe(409);
  });

  it("ends a wait with a timeout in ToolError(timedOut)", async () => {
    const id = await startRun(stack, {
      script: `import { waitForSignal, ToolError } from "rewind:tools";
export default async () => { try { await waitForSignal("never", { timeout: "1s" }); return "signalled"; } catch (e) { return e instanceof ToolError ? e.code : String(e); } };`,
    });
    expect((await waitForRun(stack, id)).result).toBe("timedOut");
  });
});
