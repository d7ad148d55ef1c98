/**
 * Metrics, scraped as Prometheus would: a `rewind worker` process with REWIND_METRICS_PORT and
 * the API's `GET /metrics`, after runs that complete, fail, park for approval and are cancelled.
 * Each scrape must parse as Prometheus' text format; the series must have moved by exactly what
 * the runs did (the worker is a fresh process, so its counters start at zero); the Temporal SDK's
 * runtime metrics come with Rewind's on the worker's one endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getFreePort } from "../helpers/free-port.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool, effectCounterTool, failingTool } from "../helpers/mcp-test-tools.ts";
import { parseExposition, samplesOf, valueOf, type Exposition } from "../helpers/prometheus-text.ts";
import { acceleratorsOn, startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { spawnWorker, type WorkerProcess } from "../helpers/worker-process.ts";
import { waitFor } from "../helpers/wait-for.ts";

let stack: RewindStack;
let server: TestMcpServer;
let worker: WorkerProcess;
let toolset: string;
let workerMetricsUrl: string;

/** Payloads over 1 KiB go to the payload store, so a run's input passes through it; runs continue as new after 60 events. */
const STACK_ENV = { REWIND_PAYLOAD_THRESHOLD: "1024", REWIND_CONTINUE_AS_NEW_EVENTS: "60" };

beforeAll(async () => {
  stack = await startRewindStack({ noWorker: true, env: STACK_ENV });
  server = await startMcpServer({
    tools: [
      echoTool("lookup"),
      failingTool("no such invoice", "fail"),
      effectCounterTool({ name: "send_invoice" }).tool,
    ],
  });
  toolset = await registerToolset(stack, {
    mcpServers: { billing: { url: server.url } },
    policies: { "billing.send_invoice": { approval: true } },
  });
  const port = await getFreePort();
  workerMetricsUrl = `http://127.0.0.1:${port}/metrics`;
  worker = await spawnWorker({
    ...STACK_ENV,
    TEMPORAL_ADDRESS: stack.address,
    REWIND_TASK_QUEUE: stack.config.temporal.taskQueue,
    REWIND_STATE_DIR: stack.config.stateDir,
    REWIND_METRICS_PORT: String(port),
  });
});
afterAll(async () => {
  await worker?.kill("SIGTERM");
  await stack?.stop();
  await server?.close();
});

async function scrape(url: string): Promise<Exposition> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await response.text());
}

/** Scrapes until `ready` holds (counters move once the worker has finished the task), then answers that scrape. */
function scrapeUntil(url: string, ready: (e: Exposition) => boolean, timeoutMs = 20_000): Promise<Exposition> {
  return waitFor(`the metrics at ${url} to move`, () => scrape(url), { timeoutMs, intervalMs: 200, until: ready });
}

async function waitParked(id: string): Promise<void> {
  await waitFor(`run ${id} to park`, async () => (await stack.request("GET", `/v1/runs/${id}`)).body, {
    timeoutMs: 20_000,
    until: (body) => body.status === "parked",
  });
}

const COMPLETES = `import { billing } from "rewind:tools";
export default async (input: { blob: string }) => { await billing.lookup({ message: "x" }); return input.blob.length; };`;
const FAILS = `import { billing } from "rewind:tools";
export default async () => { await billing.fail({}); return "unreachable"; };`;
const PARKS = `import { billing } from "rewind:tools";
export default async () => { await billing.send_invoice({ label: "42" }); return "sent"; };`;
/** Enough timers to cross the 60-event threshold: the run continues as new, and is still one run. */
const CONTINUES = `import { sleep } from "rewind:tools";
export default async () => { for (let i = 0; i < 15; i++) await Promise.all([sleep(5), sleep(5)]); return "looped"; };`;

const open = (e: Exposition, status: string) => samplesOf(e, "rewind_runs_open", { status })[0]?.value;

describe("metrics", () => {
  it("the strict reader refuses what Prometheus would refuse", () => {
    const good = '# HELP a_total A.\n# TYPE a_total counter\na_total{x="1"} 3\n';
    expect(parseExposition(good).samples).toEqual([{ name: "a_total", labels: { x: "1" }, value: 3 }]);
    for (const bad of [
      "a_total{x=1} 3", // unquoted label value
      "a-b 1", // bad name
      "a 1 2 3", // trailing fields
      "a NaNa", // not a number
      "# TYPE a gauge\n# TYPE a gauge\na 1", // TYPE twice
      "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na 2", // family split in two
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_count 1\nh_sum 1', // not cumulative
      '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_count 3\nh_sum 1', // +Inf is not the count
    ]) {
      expect(() => parseExposition(bad), bad).toThrow();
    }
  });

  it("counts runs by how they end, calls by group and outcome, steps, isolates and payloads, with the SDK's metrics on one endpoint", async () => {
    const before = await scrape(workerMetricsUrl);
    expect(valueOf(before, "rewind_runs_started_total")).toBe(0);

    const completed = await startRun(stack, { toolset, script: COMPLETES, input: { blob: "x".repeat(4096) } });
    const failed = await startRun(stack, { toolset, script: FAILS });
    const parked = await startRun(stack, { toolset, script: PARKS });
    const cancelled = await startRun(stack, { toolset, script: PARKS });
    const continued = await startRun(stack, { script: CONTINUES });
    expect(await waitForRun(stack, completed)).toMatchObject({ status: "completed", result: 4096 });
    expect(await waitForRun(stack, continued, 60_000)).toMatchObject({ status: "completed", result: "looped" });
    expect(await waitForRun(stack, failed)).toMatchObject({ status: "failed" });
    await waitParked(parked);
    await waitParked(cancelled);

    const during = await scrapeUntil(
      workerMetricsUrl,
      (e) => valueOf(e, "rewind_calls_parked_total") === 2 && valueOf(e, "rewind_runs_ended_total") === 3,
    );
    expect(valueOf(during, "rewind_runs_started_total")).toBe(5);
    expect(valueOf(during, "rewind_runs_ended_total", { outcome: "completed" })).toBe(2);
    expect(valueOf(during, "rewind_runs_continued_total")).toBeGreaterThanOrEqual(1);
    expect(samplesOf(during, "rewind_runs_ended_total", { outcome: "failed" })).toEqual([
      { name: "rewind_runs_ended_total", labels: { outcome: "failed", failure: "ScriptFailed" }, value: 1 },
    ]);
    expect(samplesOf(during, "rewind_calls_parked_total")).toEqual([
      { name: "rewind_calls_parked_total", labels: { reason: "approval" }, value: 2 },
    ]);
    expect(valueOf(during, "rewind_call_attempts_total", { kind: "mcp", group: "billing", outcome: "ok" })).toBe(1);
    expect(
      valueOf(during, "rewind_call_attempts_total", { kind: "mcp", group: "billing", outcome: "toolFailed" }),
    ).toBe(1);
    expect(valueOf(during, "rewind_call_attempt_duration_seconds_count", { kind: "mcp", group: "billing" })).toBe(2);
    expect(
      valueOf(during, "rewind_call_attempt_duration_seconds_sum", { kind: "mcp", group: "billing" }),
    ).toBeGreaterThan(0);
    // Every run's first step replays the script (cold); each call's result is a step more.
    expect(valueOf(during, "rewind_step_duration_seconds_count", { start: "cold" })).toBeGreaterThanOrEqual(5);
    expect(valueOf(during, "rewind_step_duration_seconds_count", { start: "warm" })).toBeGreaterThanOrEqual(15);
    // The two parked runs wait in warm isolates; the ended ones were let go.
    expect(valueOf(during, "rewind_sandbox_warm_isolates")).toBe(2);
    expect(valueOf(during, "rewind_sandbox_heap_used_bytes")).toBeGreaterThan(100_000);
    expect(valueOf(during, "rewind_payload_store_bytes_total", { operation: "retrieve" })).toBeGreaterThan(4096);
    // The billing server's calls left one session opened ahead for the next run (one namespace, one
    // set of credentials), unless spare sessions are off.
    expect(valueOf(during, "rewind_mcp_spare_sessions")).toBe(acceleratorsOn("spare-sessions") ? 1 : 0);
    // The Temporal SDK's runtime metrics, read from its exporter on loopback, on the same endpoint.
    expect(valueOf(during, "rewind_temporal_sdk_metrics_up")).toBe(1);
    expect(valueOf(during, "temporal_workflow_completed_total", { workflow_type: "runScript" })).toBe(2);
    expect(valueOf(during, "temporal_workflow_continue_as_new_total", { workflow_type: "runScript" })).toBe(
      valueOf(during, "rewind_runs_continued_total"),
    );
    expect(valueOf(during, "temporal_workflow_failed_total", { workflow_type: "runScript" })).toBe(1);
    expect(valueOf(during, "temporal_workflow_task_execution_latency_seconds_count")).toBeGreaterThan(0);
    expect(valueOf(during, "temporal_activity_execution_latency_seconds_count", { activity_type: "callMcpTool" })).toBe(
      2,
    );
    expect(samplesOf(during, "process_cpu_user_seconds_total")).toHaveLength(1);

    // The API counts open runs of its task queue from visibility: two parked.
    const api = await scrapeUntil(`${stack.api.url}/metrics`, (e) => open(e, "parked") === 2);
    expect([open(api, "running"), open(api, "parked")]).toEqual([0, 2]);
    expect(valueOf(api, "rewind_payload_store_bytes_total", { operation: "store" })).toBeGreaterThan(4096);

    expect((await stack.request("POST", `/v1/runs/${parked}/calls/1/approve`)).status).toBe(200);
    expect((await stack.request("POST", `/v1/runs/${cancelled}/cancel`)).status).toBeLessThan(300);
    expect(await waitForRun(stack, parked)).toMatchObject({ status: "completed", result: "sent" });
    expect(await waitForRun(stack, cancelled)).toMatchObject({ status: "cancelled" });

    const after = await scrapeUntil(workerMetricsUrl, (e) => valueOf(e, "rewind_runs_ended_total") === 5);
    expect(valueOf(after, "rewind_runs_started_total")).toBe(5);
    expect(valueOf(after, "rewind_runs_ended_total", { outcome: "completed" })).toBe(3);
    expect(valueOf(after, "rewind_runs_ended_total", { outcome: "cancelled" })).toBe(1);
    expect(valueOf(after, "rewind_call_attempts_total", { group: "billing", outcome: "ok" })).toBe(2);
    // The approved run's isolate was let go when it ended; nothing tells the sandbox of a
    // cancellation, so the cancelled run's isolate stays warm until the LRU evicts it.
    expect(valueOf(after, "rewind_sandbox_warm_isolates")).toBe(1);
    expect(valueOf(after, "rewind_sandbox_heap_used_bytes")).toBeLessThan(
      valueOf(during, "rewind_sandbox_heap_used_bytes"),
    );
    const settled = await scrapeUntil(
      `${stack.api.url}/metrics`,
      (e) => open(e, "parked") === 0 && open(e, "running") === 0,
    );
    expect([open(settled, "running"), open(settled, "parked")]).toEqual([0, 0]);
  }, 120_000);

  it("serves only GET /metrics on the worker's listener", async () => {
    expect((await fetch(workerMetricsUrl.replace(/\/metrics$/, "/v1/runs"))).status).toBe(404);
    const scrape = await fetch(workerMetricsUrl);
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toContain("rewind_sandbox_warm_isolates");
  });
});
