/**
 * What `onInterruption` does to a `fetch` whose worker dies mid-request (SIGKILL, the way a crash
 * or an OOM killer ends it): under `retry` a POST is sent again, with the same Idempotency-Key;
 * without one, the method decides as it always did — GET sent again, POST never sent twice and
 * ending in ToolError(outcomeUnknown). The worker runs in a child process so it can be killed;
 * its http tool reaches the loopback site through the tests' seam (`stack-process.ts`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLoopbackServer, type LoopbackServer } from "../helpers/http-loopback.ts";
import { REPO_ROOT, startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { expectRunGoing } from "../helpers/run-going.ts";
import { startStackProcess, type StackHandle } from "../histories/stack-runner.ts";
import { HTTP_HOST_NAME } from "../histories/world.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
let site: LoopbackServer;
const workers: StackHandle[] = [];
/** Requests to /hold by idempotency key, in arrival order. */
const hits: { method: string; key: string }[] = [];

beforeAll(async () => {
  // A key's first request is held unanswered (its worker is killed meanwhile); a repeat is answered.
  site = await startLoopbackServer((req, res) => {
    const key = String(req.headers["idempotency-key"]);
    const repeat = hits.some((h) => h.key === key);
    hits.push({ method: req.method ?? "", key });
    if (repeat) res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ method: req.method }));
  });
  stack = await startRewindStack({ noWorker: true });
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop("SIGKILL")));
  await stack?.stop();
  await site?.close();
});

const startWorker = async (): Promise<StackHandle> => {
  const worker = await startStackProcess({
    root: REPO_ROOT,
    temporalAddress: stack.address,
    taskQueue: stack.config.temporal.taskQueue,
    stateDir: stack.config.stateDir,
  });
  workers.push(worker);
  return worker;
};

const attempt = (call: string) =>
  `(async () => { try { return ["ok", (await ${call}).status]; } catch (e) { return e instanceof ToolError ? [e.code] : ["other", String(e)]; } })()`;

describe("onInterruption for http.fetch", () => {
  it("retry sends a POST again with the same key; without it GET is sent again and POST ends as outcomeUnknown", async () => {
    const url = `http://${HTTP_HOST_NAME}:${site.port}/hold`;
    const host = `${HTTP_HOST_NAME}:${site.port}`;
    // A short deadline keeps the lost attempt's backstop (timeout + 15 s) short.
    const retrying = await registerToolset(stack, {
      http: { allowedHosts: [host] },
      policies: { "http.fetch": { onInterruption: "retry", timeout: "5s" } },
    });
    const byMethod = await registerToolset(stack, {
      http: { allowedHosts: [host] },
      policies: { "http.fetch": { timeout: "5s" } },
    });
    const first = await startWorker();
    const retried = await startRun(stack, {
      toolset: retrying,
      script: `import { ToolError } from "rewind:tools";\nexport default async () => [await ${attempt(`fetch("${url}", { method: "POST", body: "a" })`)}];`,
    });
    const defaults = await startRun(stack, {
      toolset: byMethod,
      script: `import { ToolError } from "rewind:tools";\nexport default async () => Promise.all([${attempt(`fetch("${url}")`)}, ${attempt(`fetch("${url}", { method: "POST", body: "b" })`)}]);`,
    });

    await waitFor("the three requests to reach the site", () => hits.length >= 3, { intervalMs: 20 });
    // All three requests are held at the site, well within their 5-second deadline: the kill interrupts them.
    expect(hits.length).toBe(3);
    await expectRunGoing(stack.client, retried);
    await expectRunGoing(stack.client, defaults);
    await first.stop("SIGKILL");
    await startWorker();

    const [one, two] = await Promise.all([waitForRun(stack, retried, 90_000), waitForRun(stack, defaults, 90_000)]);
    expect(one.result).toEqual([["ok", 200]]);
    expect(two.result).toEqual([["ok", 200], ["outcomeUnknown"]]);
    const sent = (key: string) => hits.filter((h) => h.key === key).map((h) => h.method);
    expect(sent(`${retried}/1`)).toEqual(["POST", "POST"]);
    expect(sent(`${defaults}/1`)).toEqual(["GET", "GET"]);
    expect(sent(`${defaults}/2`)).toEqual(["POST"]);
  }, 150_000);
});
