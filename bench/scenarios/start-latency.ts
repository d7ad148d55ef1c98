/**
 * Start latency: from `POST /v1/runs` leaving the bench to the run's first `tools/call` arriving
 * at the MCP server (which notes the time; both processes read the same clock), on a warm stack,
 * one run at a time. Each sample's history splits that time: the API (type-check and start) up
 * to WorkflowExecutionStarted, the first workflow task (with the cold sandbox step), the activity
 * task's dispatch, and the activity up to the request reaching the server. Beside each sample, the
 * plain workflow makes the same one call, and both histories give the time from the run's start
 * (WorkflowExecutionStarted) to its first activity scheduled. Then the same again as `npm start`
 * runs the stack: the API in the workers' process, sharing the Rewind worker's connection, starts
 * runs eagerly, and the plain workflow is started eagerly on its worker's connection.
 */
import { randomUUID } from "node:crypto";
import type { BenchContext } from "../context.ts";
import { plainRun, postRun } from "../drivers.ts";
import { fetchHistories } from "../history.ts";
import { median, p95 } from "../stats.ts";

export interface StartLatencyResult {
  samples: number[];
  medianMs: number;
  p95Ms: number;
  post: { medianMs: number; p95Ms: number };
  /** Median of each phase, ms. */
  phases: { apiToStarted: number; firstWorkflowTask: number; activityDispatch: number; activityToServer: number };
  /**
   * The plain workflow's start (the Temporal client's, sent from this process) → its one call at
   * the MCP server, ms: Temporal's own floor for the same path, on a session the plain worker's
   * pool already has open (a Rewind run opens a session of its own).
   */
  plainToServer: { medianMs: number; p95Ms: number };
  /** Median of WorkflowExecutionStarted → first ActivityTaskScheduled, ms: Rewind's and the plain workflow's. */
  headMs: { rewind: number; plain: number };
  /**
   * API and worker in one process (eager start): POST → the call at the MCP server, and the
   * plain workflow's eager start → its call; with how many of each started eagerly.
   */
  eager: {
    medianMs: number;
    p95Ms: number;
    /** Median of WorkflowExecutionStarted → first ActivityTaskScheduled, ms, each started eagerly. */
    headMs: { rewind: number; plain: number };
    post: { medianMs: number };
    plainToServer: { medianMs: number; p95Ms: number };
    started: { rewind: number; plain: number; of: number };
  };
}

const SCRIPT = `import { svc } from "rewind:tools";

export default async function main(input: { i: number }) {
  const { i } = await svc.echo({ i: input.i });
  return i;
}
`;

type Histories = Awaited<ReturnType<typeof fetchHistories>>;
type Event = NonNullable<Histories[number]["events"]>[number];

/** WorkflowExecutionStarted → the first ActivityTaskScheduled of a run's first execution, ms. */
function headOf(events: Event[]): number {
  const started = events.find((e) => e.workflowExecutionStartedEventAttributes);
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes);
  return timeOf(scheduled) - timeOf(started);
}

function timeOf(event: Event | undefined): number {
  const time = event?.eventTime;
  return time ? Number(String(time.seconds ?? 0)) * 1000 + (time.nanos ?? 0) / 1e6 : Number.NaN;
}

export async function measureStartLatency(ctx: BenchContext): Promise<StartLatencyResult> {
  const { stack } = ctx;
  const { warmup, samples: count } = ctx.sizes.start;
  const samples: number[] = [];
  const posts: number[] = [];
  const phases = {
    apiToStarted: [] as number[],
    firstWorkflowTask: [] as number[],
    activityDispatch: [] as number[],
    activityToServer: [] as number[],
  };
  const heads = { rewind: [] as number[], plain: [] as number[] };
  const plainSamples: number[] = [];
  const eager = {
    samples: [] as number[],
    posts: [] as number[],
    plain: [] as number[],
    plainEager: 0,
    heads: { rewind: [] as number[], plain: [] as number[] },
  };
  const { url: eagerApiUrl } = await stack.workers.call<{ url: string }>("startEagerApi");
  const arrivalOf = async (id: string): Promise<number> => {
    const arrivedAt = (await stack.mcp.call<Record<string, number | null>>("firstArrivals", [id]))[id];
    if (typeof arrivedAt !== "number") throw new Error(`the MCP server saw no call of ${id}`);
    return arrivedAt;
  };
  // The API beside the worker has its own type-checker to warm.
  for (let k = -warmup; k < 0; k++) {
    const posted = await postRun(stack, SCRIPT, { i: k }, stack.toolsetId, eagerApiUrl);
    await stack.client.workflow.getHandle(posted.id).result();
  }
  const eagerBefore = await stack.workers.call<{ eager: number }>("eagerApiStarts");
  for (let k = -warmup; k < count; k++) {
    const posted = await postRun(stack, SCRIPT, { i: k });
    await stack.client.workflow.getHandle(posted.id).result();
    if (k < 0) continue;
    const arrivals = await stack.mcp.call<Record<string, number | null>>("firstArrivals", [posted.id]);
    const arrivedAt = arrivals[posted.id];
    if (typeof arrivedAt !== "number") throw new Error(`the MCP server saw no call of ${posted.id}`);
    samples.push(arrivedAt - posted.sentAt);
    posts.push(posted.postMs);
    const [history] = await fetchHistories(stack.client, posted.id);
    const events = history?.events ?? [];
    const started = events.find((e) => e.workflowExecutionStartedEventAttributes);
    const firstTaskDone = events.find((e) => e.workflowTaskCompletedEventAttributes);
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes);
    const activityStarted = events.find((e) => e.activityTaskStartedEventAttributes);
    phases.apiToStarted.push(timeOf(started) - posted.sentAt);
    phases.firstWorkflowTask.push(timeOf(firstTaskDone) - timeOf(started));
    phases.activityDispatch.push(timeOf(activityStarted) - timeOf(scheduled));
    phases.activityToServer.push(arrivedAt - timeOf(activityStarted));
    heads.rewind.push(headOf(events));
    const plain = await plainRun(stack, 1, 1);
    const plainArrivedAt = (await stack.mcp.call<Record<string, number | null>>("firstArrivals", [plain.id]))[plain.id];
    if (typeof plainArrivedAt !== "number") throw new Error(`the MCP server saw no call of ${plain.id}`);
    plainSamples.push(plainArrivedAt - plain.sentAt);
    const [plainHistory] = await fetchHistories(stack.plainClient, plain.id);
    heads.plain.push(headOf(plainHistory?.events ?? []));

    const postedEager = await postRun(stack, SCRIPT, { i: k }, stack.toolsetId, eagerApiUrl);
    await stack.client.workflow.getHandle(postedEager.id).result();
    eager.samples.push((await arrivalOf(postedEager.id)) - postedEager.sentAt);
    eager.posts.push(postedEager.postMs);
    eager.heads.rewind.push(headOf((await fetchHistories(stack.client, postedEager.id))[0]?.events ?? []));
    const plainId = `plain_${randomUUID()}`;
    const plainEager = await stack.workers.call<{ sentAt: number; eagerlyStarted: boolean }>("startPlainEager", {
      id: plainId,
      url: stack.mcpUrl,
      n: 1,
    });
    await stack.plainClient.workflow.getHandle(plainId).result();
    eager.plain.push((await arrivalOf(plainId)) - plainEager.sentAt);
    if (plainEager.eagerlyStarted) eager.plainEager += 1;
    eager.heads.plain.push(headOf((await fetchHistories(stack.plainClient, plainId))[0]?.events ?? []));
  }
  const eagerAfter = await stack.workers.call<{ eager: number }>("eagerApiStarts");
  const result: StartLatencyResult = {
    samples,
    medianMs: median(samples),
    p95Ms: p95(samples),
    post: { medianMs: median(posts), p95Ms: p95(posts) },
    plainToServer: { medianMs: median(plainSamples), p95Ms: p95(plainSamples) },
    phases: {
      apiToStarted: median(phases.apiToStarted),
      firstWorkflowTask: median(phases.firstWorkflowTask),
      activityDispatch: median(phases.activityDispatch),
      activityToServer: median(phases.activityToServer),
    },
    headMs: { rewind: median(heads.rewind), plain: median(heads.plain) },
    eager: {
      medianMs: median(eager.samples),
      p95Ms: p95(eager.samples),
      headMs: { rewind: median(eager.heads.rewind), plain: median(eager.heads.plain) },
      post: { medianMs: median(eager.posts) },
      plainToServer: { medianMs: median(eager.plain), p95Ms: p95(eager.plain) },
      started: { rewind: eagerAfter.eager - eagerBefore.eager, plain: eager.plainEager, of: count },
    },
  };
  ctx.log(
    `start latency: median ${result.medianMs.toFixed(1)} ms, p95 ${result.p95Ms.toFixed(1)} ms over ${count} runs; started → first activity scheduled: Rewind ${result.headMs.rewind.toFixed(1)} ms, plain ${result.headMs.plain.toFixed(1)} ms; eager start: ${result.eager.medianMs.toFixed(1)} ms, plain ${result.eager.plainToServer.medianMs.toFixed(1)} ms`,
  );
  return result;
}
