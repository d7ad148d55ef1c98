/**
 * The chaos driver: many runs against idempotent MCP servers that count effects per key, while
 * one or more Rewind workers (one task queue) are SIGKILLed at random moments, the Temporal dev
 * server is restarted on its SQLite file (or an existing cluster's services, through the hook it
 * came with: chaos-temporal.ts), and an MCP server goes down for longer than a retry interval.
 * It then checks the promises: every run completed with the right result, no run is stuck
 * (every journaled call ended, yet the run never ends), every effect happened once per key, no
 * at-most-once call was attempted twice, every event was delivered. Every fault is
 * injected only while a run is still going (running, with calls not yet performed), and the
 * report counts the faults that were. Used by `test/chaos/chaos.test.ts`, `npm run soak` and the
 * cluster checks (`test/cluster/`).
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@temporalio/client";
import { startApi, type RunningApi } from "../../src/cli/start-api.ts";
import { loadConfig } from "../../src/config.ts";
import type { JournalEntry } from "../../src/shared/journal.ts";
import { silentLogger } from "../../src/shared/logger.ts";
import { startEventReceiver } from "../helpers/event-receiver.ts";
import { startMcpServer, type TestMcpServer, type TestToolDefinition } from "../helpers/mcp-test-server.ts";
import { IDEMPOTENCY_KEY, effectCounterTool } from "../helpers/mcp-test-tools.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { TEST_SECRET_KEY } from "../helpers/secret-key.ts";
import { terminateOpenWorkflows } from "../helpers/task-queue-cleanup.ts";
import { spawnWorker, type WorkerProcess } from "../helpers/worker-process.ts";
import { clusterTemporal, devServerTemporal, type ChaosCluster, type ChaosTemporal } from "./chaos-temporal.ts";

/** Longer than the Temporal client's retries of one call (10 attempts, backoff up to 10 s). */
const CLOSE_AFTER_RETRIES_MS = 120_000;

export interface ChaosOptions {
  /**
   * Where the round runs: a Temporal dev server of its own (the `temporal` CLI at `cliPath`), or
   * an existing cluster, where it uses a task queue and a Rewind namespace of its own, touches
   * no other workflow, and terminates what it left open when it ends.
   */
  temporal: { cliPath: string } | { cluster: ChaosCluster };
  /** Runs started, short and long together. */
  runs: number;
  /** How many of the runs are long (sequential calls, then 16 in parallel); default 40 %. */
  longRuns?: number;
  /** The range a long run's count of sequential calls is drawn from; default 30–100. */
  longRunCalls?: { min: number; max: number };
  /** Rewind worker processes polling the task queue; default 1. Kills go round them. */
  workers?: number;
  /** Worker SIGKILLs, spread over the runs' lifetime; each killed worker is started again. */
  kills: number;
  /** Restart the Temporal server once, mid-run (on a cluster: only with its `restart` hook). */
  restartServer: boolean;
  /** Stop the MCP server for this long, once. */
  mcpOutageMs: number;
  /** Give up waiting for the runs this long after the round began. */
  deadlineMs: number;
  /**
   * A running run whose journal has every call ended and that has not changed for this long is
   * stuck (default 60 s): the round stops waiting for it.
   */
  stuckAfterMs?: number;
  log?: (line: string) => void;
}

export interface ChaosReport {
  /** `dev server`, or the cluster's address. */
  temporal: string;
  /** The round's own task queue: its runs, records and event deliveries, nothing else. */
  taskQueue: string;
  workers: number;
  runs: number;
  longRuns: number;
  completed: number;
  /** Runs that ended otherwise than completed with the expected result. */
  wrongResults: string[];
  /**
   * Runs still open whose journal shows every call ended and nothing pending, which did not end
   * within `stuckAfterMs` of their journal's last change (or by the deadline).
   */
  stuckRuns: string[];
  /**
   * Runs still open with calls pending in their journal (or a journal that could not be read):
   * at the deadline, or once unchanged for `stuckAfterMs` with their workflow task failing again
   * and again (Temporal shows no pending activity and a task on its 3rd attempt or more).
   */
  unfinishedRuns: string[];
  kills: number;
  killsPerWorker: number[];
  serverRestarts: number;
  mcpOutages: number;
  /** Kills, server restarts and MCP outages injected. */
  faults: number;
  /** Faults injected right after a run was seen RUNNING with calls not yet performed at the MCP server. */
  faultsOnOpenRuns: number;
  /** Workers that exited without being killed by the driver (each was started again). */
  workerExits: number;
  effects: number;
  effectsExpected: number;
  duplicateEffects: string[];
  /** Keys the at-most-once tool saw: one per short run that sent, none for one whose send never left. */
  atMostOnceCalls: number;
  /** Short runs whose script saw the send succeed (the others saw `outcomeUnknown`). */
  atMostOnceSent: number;
  atMostOnceRepeated: string[];
  /** Short runs whose script saw the send succeed while the tool never saw their key. */
  atMostOnceLost: string[];
  eventsExpected: number;
  eventsDelivered: number;
  /** On a cluster: workflows of the round still open at its end, terminated (stuck runs, records). */
  terminatedAtEnd: number;
  seconds: number;
  /**
   * Set when a run was stuck or unfinished: the round's directory, kept with the Temporal
   * server's SQLite file and log (`temporal server start-dev --db-filename <dir>/temporal.sqlite`).
   */
  keptDir?: string;
}

/** What broke in a round, by kind; a round is clean when every count is 0. */
export function brokenPromises(report: ChaosReport): Record<BrokenPromise, number> {
  return {
    stuck: report.stuckRuns.length,
    unfinished: report.unfinishedRuns.length,
    wrongResults: report.wrongResults.length,
    duplicateEffects: report.duplicateEffects.length,
    atMostOnceRepeated: report.atMostOnceRepeated.length,
    atMostOnceLost: report.atMostOnceLost.length,
    eventsNotDelivered: report.eventsExpected - report.eventsDelivered,
    faultsOnNoOpenRun: report.faults - report.faultsOnOpenRuns,
  };
}

type BrokenPromise =
  | "stuck"
  | "unfinished"
  | "wrongResults"
  | "duplicateEffects"
  | "atMostOnceRepeated"
  | "atMostOnceLost"
  | "eventsNotDelivered"
  | "faultsOnNoOpenRun";

/** Every count of `brokenPromises` at 0: a clean round, and what a soak's running totals start from. */
export const NO_BROKEN_PROMISES: Readonly<Record<BrokenPromise, number>> = {
  stuck: 0,
  unfinished: 0,
  wrongResults: 0,
  duplicateEffects: 0,
  atMostOnceRepeated: 0,
  atMostOnceLost: 0,
  eventsNotDelivered: 0,
  faultsOnNoOpenRun: 0,
};

const SHORT_SCRIPT = `import { svc, sleep, ToolError } from "rewind:tools";
export default async function main(input: { n: number }) {
  let total = 0;
  for (let i = 0; i < 6; i++) {
    const r = await svc.record_effect({ label: "s" + i }) as { key: string };
    if (r.key) total += 1;
    await sleep(200 + (i * 37) % 300);
  }
  const parallel = await Promise.all(Array.from({ length: 8 }, (_, i) => svc.record_effect({ label: "p" + i })));
  // At most once: resent only when the call provably never left (the server was unreachable).
  let email = "unsent";
  for (let attempt = 0; attempt < 8 && email === "unsent"; attempt++) {
    try { await svc.send_email({ to: "n" + input.n, attempt }); email = "sent"; }
    catch (e) {
      const notSent = e instanceof ToolError && e.code === "toolFailed" && (e.details as { reason?: string } | undefined)?.reason === "unreachable";
      if (notSent) await sleep("1s");
      else email = e instanceof ToolError ? e.code : "error";
    }
  }
  return { n: input.n, sequential: total, parallel: parallel.length, email };
}`;

const LONG_SCRIPT = `import { svc } from "rewind:tools";
export default async function main(input: { n: number; sequential: number }) {
  let total = 0;
  for (let i = 0; i < input.sequential; i++) {
    const r = await svc.record_effect({ label: "s" + i }) as { key: string };
    if (r.key) total += 1;
  }
  const parallel = await Promise.all(Array.from({ length: 16 }, (_, i) => svc.record_effect({ label: "p" + i }) as Promise<{ key: string }>));
  return { n: input.n, sequential: total, parallel: parallel.filter((r) => r.key).length };
}`;

interface PlannedRun {
  n: number;
  long: boolean;
  input: Record<string, number>;
  expected: unknown;
  /** Calls that reach the MCP server once each: record_effect keys, plus send_email for a short run. */
  calls: number;
  id: string;
  status?: string;
  view?: Record<string, unknown>;
  /** Driver time the run's journal last changed (or it started). */
  changedAt: number;
  journalSignature?: string;
  journal?: JournalEntry[];
  journalError?: string;
  /** Set when, unchanged for stuckAfterMs, Temporal shows no activity and a workflow task failing again and again. */
  failingTask?: boolean;
}

function planRuns(runs: number, longRuns: number, longRunCalls: { min: number; max: number }): PlannedRun[] {
  return Array.from({ length: runs }, (_, n): PlannedRun => {
    // Long runs interleaved with short ones.
    const long = Math.floor(((n + 1) * longRuns) / runs) > Math.floor((n * longRuns) / runs);
    const sequential = longRunCalls.min + Math.floor(Math.random() * (longRunCalls.max - longRunCalls.min + 1));
    return long
      ? {
          n,
          long,
          input: { n, sequential },
          expected: { n, sequential, parallel: 16 },
          calls: sequential + 16,
          id: "",
          changedAt: 0,
        }
      : {
          n,
          long,
          input: { n },
          expected: { n, sequential: 6, parallel: 8, email: "sent or outcomeUnknown" },
          calls: 15,
          id: "",
          changedAt: 0,
        };
  });
}

/**
 * A short run's send either succeeded or its outcome is unknown (a worker died with the send in
 * flight, which at_most_once never resends); both keep the promise, so either is expected.
 */
function resultAsExpected(run: PlannedRun, got: unknown): boolean {
  if (run.long) return JSON.stringify(got) === JSON.stringify(run.expected);
  const { email, ...rest } = (got ?? {}) as { email?: unknown };
  const { email: _described, ...expectedRest } = run.expected as { email: string };
  return (email === "sent" || email === "outcomeUnknown") && JSON.stringify(rest) === JSON.stringify(expectedRest);
}

/** A tool that ignores the idempotency key, as an email sender would: it must never see a key twice. */
function sendEmailTool(seen: Map<string, number>): TestToolDefinition {
  return {
    name: "send_email",
    inputSchema: { type: "object" },
    async handler(_args, { meta }) {
      const key = String(meta[IDEMPOTENCY_KEY]);
      seen.set(key, (seen.get(key) ?? 0) + 1);
      return { content: [{ type: "text", text: '{"sent":true}' }] };
    },
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function retrying<T>(what: () => Promise<T>, attempts = 60): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await what();
    } catch (error) {
      if (i >= attempts) throw error;
      await pause(500);
    }
  }
}

const OPEN_STATES = new Set(["running", "parked"]);
const OPEN_CALLS = new Set(["pending", "running", "parked"]);
const JOURNAL_EVERY_MS = 5_000;
const PROGRESS_EVERY_MS = 10_000;

/** The name of a history event's kind, from whichever `…EventAttributes` field it carries. */
function eventKind(event: object): string {
  const field = Object.entries(event).find(([name, value]) => name.endsWith("EventAttributes") && value);
  return field ? field[0].replace(/EventAttributes$/, "") : "unknown";
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const began = Date.now();
  const log = (line: string) => options.log?.(`+${Math.round((Date.now() - began) / 1000)}s ${line}`);
  const workerCount = options.workers ?? 1;
  const longRuns = Math.min(options.runs, options.longRuns ?? Math.floor(options.runs * 0.4));
  const stuckAfterMs = options.stuckAfterMs ?? 60_000;
  const dir = await mkdtemp(path.join(tmpdir(), "rewind-chaos-"));
  const temporal: ChaosTemporal =
    "cluster" in options.temporal
      ? clusterTemporal(options.temporal.cluster)
      : await devServerTemporal(options.temporal.cliPath, dir);
  const taskQueue = `chaos-${randomUUID()}`;
  // A Rewind namespace of the round's own: its toolset and events endpoint are records no other
  // round on the same Temporal namespace shares.
  const tenant = `chaos-${randomUUID().slice(0, 8)}`;
  const env = {
    ...temporal.env,
    REWIND_TASK_QUEUE: taskQueue,
    REWIND_STATE_DIR: path.join(REPO_ROOT, ".rewind"),
    REWIND_SECRET_KEY: TEST_SECRET_KEY.toString("base64"),
  };
  // The MCP server and the events receiver listen on loopback: trusted, since keys turn the outbound target policy on.
  const config = loadConfig(
    {
      ...env,
      REWIND_PORT: "0",
      REWIND_API_KEYS: `chaos-key-${"x".repeat(16)}:${tenant}`,
      REWIND_TRUSTED_TARGETS: "127.0.0.1",
    },
    REPO_ROOT,
  );
  const auth = { authorization: `Bearer chaos-key-${"x".repeat(16)}` };
  const effects = effectCounterTool();
  const emails = new Map<string, number>();
  const tools = [effects.tool, sendEmailTool(emails)];
  let mcp: TestMcpServer = await startMcpServer({ tools });
  const mcpPort = mcp.port;
  const receiver = await startEventReceiver();
  let api: RunningApi | undefined;
  let temporalClient: Client | undefined;
  /** One slot per worker; `busy` while the driver kills or starts the slot's process. */
  const slots: { worker: WorkerProcess | undefined; busy: boolean }[] = Array.from({ length: workerCount }, () => ({
    worker: undefined,
    busy: false,
  }));
  const plan = planRuns(options.runs, longRuns, options.longRunCalls ?? { min: 30, max: 100 });
  const report: ChaosReport = {
    temporal: temporal.owned ? "dev server" : temporal.address,
    taskQueue,
    workers: workerCount,
    runs: options.runs,
    longRuns,
    completed: 0,
    wrongResults: [],
    stuckRuns: [],
    unfinishedRuns: [],
    kills: 0,
    killsPerWorker: slots.map(() => 0),
    serverRestarts: 0,
    mcpOutages: 0,
    faults: 0,
    faultsOnOpenRuns: 0,
    workerExits: 0,
    effects: 0,
    effectsExpected: plan.reduce((sum, run) => sum + run.calls - (run.long ? 0 : 1), 0),
    duplicateEffects: [],
    atMostOnceCalls: 0,
    atMostOnceSent: 0,
    atMostOnceRepeated: [],
    atMostOnceLost: [],
    eventsExpected: 0,
    eventsDelivered: 0,
    terminatedAtEnd: 0,
    seconds: 0,
  };
  try {
    api = await startApi(config, temporal.address, undefined, silentLogger);
    const call = async (method: string, route: string, body?: unknown) => {
      const response = await fetch(api!.url + route, {
        method,
        headers: { "content-type": "application/json", ...auth },
        body: body === undefined ? undefined : JSON.stringify(body),
        // A read may wait on a worker that was just killed (a query); writes are not cut short.
        ...(method === "GET" ? { signal: AbortSignal.timeout(10_000) } : {}),
      });
      const text = await response.text();
      if (response.status >= 500) throw new Error(`${method} ${route} → ${response.status} ${text}`);
      return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
    };
    for (const slot of slots) slot.worker = await spawnWorker(env);
    const endpoint = await retrying(() => call("PUT", "/v1/events/endpoint", { url: receiver.url }));
    receiver.setSecret(String(endpoint.body["secret"]));
    const toolset = await retrying(() =>
      call("POST", "/v1/toolsets", {
        mcpServers: { svc: { url: mcp.url } },
        policies: { "svc.send_email": { onInterruption: "at_most_once", timeout: "10s" } },
      }),
    );
    for (const run of plan) {
      const started = await retrying(() =>
        call("POST", "/v1/runs", {
          toolset: toolset.body["id"],
          script: run.long ? LONG_SCRIPT : SHORT_SCRIPT,
          input: run.input,
        }),
      );
      run.id = String(started.body["id"]);
      run.changedAt = Date.now();
    }
    log(
      `started ${plan.length} runs (${longRuns} long: ${plan
        .filter((r) => r.long)
        .map((r) => r.calls)
        .join(", ")} calls) on ${workerCount} worker(s)`,
    );

    /** Calls of the run that reached the MCP server (each key once). */
    const performed = (run: PlannedRun) => {
      const prefix = `${run.id}/`;
      let count = 0;
      for (const key of effects.state.effects.keys()) if (key.startsWith(prefix)) count += 1;
      for (const key of emails.keys())
        if (key.startsWith(prefix)) {
          count += 1;
          break;
        }
      return count;
    };
    const ended = (run: PlannedRun) => run.status !== undefined && !OPEN_STATES.has(run.status);
    const allEnded = () => plan.every(ended);
    /** Every journaled call ended and the journal has not changed for stuckAfterMs. */
    const stuck = (run: PlannedRun) =>
      !ended(run) &&
      run.journal !== undefined &&
      run.journal.every((e) => !OPEN_CALLS.has(e.status)) &&
      Date.now() - run.changedAt >= stuckAfterMs;

    const readJournal = async (run: PlannedRun) => {
      try {
        const entries: JournalEntry[] = [];
        for (let afterSeq = 0; ;) {
          const answer = await call("GET", `/v1/runs/${run.id}/journal?limit=1000&afterSeq=${afterSeq}`);
          if (answer.status !== 200) throw new Error(`${answer.status} ${JSON.stringify(answer.body)}`);
          entries.push(...(answer.body["entries"] as JournalEntry[]));
          if (typeof answer.body["nextAfterSeq"] !== "number") break;
          afterSeq = answer.body["nextAfterSeq"];
        }
        const signature = JSON.stringify(entries.map((e) => [e.seq, e.status, e.attempts]));
        if (signature !== run.journalSignature) {
          run.journalSignature = signature;
          run.changedAt = Date.now();
          run.failingTask = false;
        }
        run.journal = entries;
        run.journalError = undefined;
      } catch (error) {
        run.journalError = String(error);
      }
    };
    // Temporal itself, for what the API does not show: a run's pending activities and workflow task.
    const client = await temporal.client();
    temporalClient = client;
    /** Reads every open run's status, and every JOURNAL_EVERY_MS its journal; all runs at once. */
    let journalsReadAt = 0;
    let progressAt = 0;
    const poll = async () => {
      const readJournals = Date.now() - journalsReadAt >= JOURNAL_EVERY_MS;
      if (readJournals) journalsReadAt = Date.now();
      await Promise.all(
        plan
          .filter((run) => !ended(run))
          .map(async (run) => {
            const view = await call("GET", `/v1/runs/${run.id}`).catch(() => undefined);
            if (view?.status === 200) {
              run.status = String(view.body["status"]);
              run.view = view.body;
            }
            if (!ended(run) && readJournals) await readJournal(run);
            if (!ended(run) && !stuck(run) && readJournals && Date.now() - run.changedAt >= stuckAfterMs) {
              const { raw } = await client.workflow
                .getHandle(run.id)
                .describe()
                .catch(() => ({ raw: undefined }));
              run.failingTask =
                raw !== undefined &&
                (raw.pendingActivities?.length ?? 0) === 0 &&
                (raw.pendingWorkflowTask?.attempt ?? 0) >= 3;
            }
          }),
      );
      if (Date.now() - progressAt >= PROGRESS_EVERY_MS) {
        progressAt = Date.now();
        const open = plan.filter((run) => !ended(run));
        log(
          `${plan.length - open.length}/${plan.length} runs ended; open: ${open.map((run) => `${run.long ? "long" : "short"} ${performed(run)}/${run.calls}${stuck(run) ? " STUCK" : ""}`).join(", ")}`,
        );
      }
    };

    /** Starts again any worker that exited without being killed by the driver. */
    const supervise = async () => {
      for (const [index, slot] of slots.entries()) {
        const child = slot.worker?.child;
        if (slot.busy || !child || (child.exitCode === null && child.signalCode === null)) continue;
        slot.busy = true;
        report.workerExits += 1;
        log(
          `worker ${index + 1} exited by itself (${child.exitCode ?? child.signalCode}): ${slot.worker?.output().split("\n").slice(-5).join(" | ")}`,
        );
        try {
          slot.worker = await retrying(() => spawnWorker(env), 10);
        } finally {
          slot.busy = false;
        }
      }
    };

    /**
     * Right before a fault: a run seen RUNNING (by Temporal's describe, through the API) whose
     * calls have not all reached the MCP server yet. Undefined when none is found.
     */
    const openRun = async (): Promise<PlannedRun | undefined> => {
      for (let attempt = 0; attempt < 10; attempt++) {
        const candidates = plan
          .filter((run) => !ended(run) && performed(run) < run.calls)
          .sort(() => Math.random() - 0.5);
        if (candidates.length === 0) return undefined;
        let answered = false;
        for (const run of candidates) {
          const view = await call("GET", `/v1/runs/${run.id}`).catch(() => undefined);
          if (view?.status !== 200) continue;
          answered = true;
          run.status = String(view.body["status"]);
          if (OPEN_STATES.has(run.status) && performed(run) < run.calls) return run;
        }
        if (answered) return undefined;
        await pause(500);
      }
      return undefined;
    };
    /** Counts a fault; answers false when there is nothing left to hit. */
    const beforeFault = async (what: string): Promise<boolean> => {
      const open = await openRun();
      if (!open && plan.every((run) => ended(run) || performed(run) >= run.calls)) {
        log(`${what}: skipped, no run is still going`);
        return false;
      }
      report.faults += 1;
      if (open) report.faultsOnOpenRuns += 1;
      log(
        `${what} while ${open ? `${open.id} (${open.long ? "long" : "short"}) is ${open.status} with ${performed(open)}/${open.calls} calls performed` : "NO run was seen going"}`,
      );
      return true;
    };

    // The faults, spread over the first part of the runs' lifetime. A killed worker is started
    // again in the background, so with two or more the next kill (of another worker) need not wait
    // for it: two workers finish the runs about twice as fast, and kills that each waited for a
    // restart ran out of open runs before the tenth (a CI run saw 9).
    const firstSlot = Math.floor(Math.random() * workerCount);
    const restarts: Promise<void>[] = [];
    const restartInBackground = (slot: (typeof slots)[number]) => {
      restarts.push(
        (async () => {
          try {
            if (slot.worker?.child.exitCode !== null || slot.worker?.child.signalCode !== null)
              slot.worker = await retrying(() => spawnWorker(env), 10);
          } finally {
            slot.busy = false;
          }
        })(),
      );
    };
    const chaos = (async () => {
      for (let k = 0; k < options.kills && !allEnded(); k++) {
        await pause(700 + Math.floor(Math.random() * 1300));
        const index = (firstSlot + k) % workerCount;
        const slot = slots[index]!;
        while (slot.busy) await pause(100);
        slot.busy = true;
        try {
          if (!(await beforeFault(`kill ${report.kills + 1} (worker ${index + 1} of ${workerCount})`))) break;
          await slot.worker?.kill("SIGKILL");
          report.kills += 1;
          report.killsPerWorker[index]! += 1;
          const restart = temporal.restart;
          if (
            k === Math.floor(options.kills / 3) &&
            options.restartServer &&
            restart &&
            (await beforeFault("server restart"))
          ) {
            await restart();
            report.serverRestarts += 1;
            log(temporal.owned ? "temporal server restarted on its SQLite file" : "the cluster's services restarted");
          }
          if (
            k === Math.floor((2 * options.kills) / 3) &&
            options.mcpOutageMs > 0 &&
            (await beforeFault("MCP outage"))
          ) {
            await mcp.close();
            await pause(options.mcpOutageMs);
            mcp = await startMcpServer({ tools, port: mcpPort });
            report.mcpOutages += 1;
            log(`MCP server back after ${options.mcpOutageMs} ms`);
          }
        } finally {
          restartInBackground(slot);
        }
      }
      await Promise.all(restarts);
    })();
    let chaosOver = false;
    const chaosDone = chaos.finally(() => {
      chaosOver = true;
    });

    // Wait until every run has ended or is stuck, or the deadline passes.
    const deadline = began + options.deadlineMs;
    while (Date.now() < deadline) {
      await supervise();
      await poll();
      if (chaosOver && plan.every((run) => ended(run) || stuck(run) || run.failingTask)) break;
      await pause(1000);
    }
    await chaosDone;
    await poll();

    for (const run of plan) {
      if (!ended(run)) {
        await readJournal(run);
        const where = await inspectOpen(client, run.id);
        const quiet = Math.round((Date.now() - run.changedAt) / 1000);
        const head = `${run.id} (${run.long ? "long" : "short"}, ${performed(run)}/${run.calls} calls performed)`;
        if (!run.journal) {
          report.unfinishedRuns.push(`${head}: journal unreadable (${run.journalError}); ${where}`);
        } else {
          const open = run.journal.filter((e) => OPEN_CALLS.has(e.status));
          const last = run.journal.at(-1);
          const summary = `${run.journal.length} journaled, last seq ${last?.seq ?? "-"} ${last?.tool ?? ""} ${last?.status ?? ""}, unchanged for ${quiet} s; ${where}`;
          if (open.length === 0) report.stuckRuns.push(`${head}: every call ended, ${summary}`);
          else if (run.failingTask)
            report.unfinishedRuns.push(
              `${head}: its workflow task fails again and again; calls open ${open.map((e) => `${e.seq}:${e.tool}:${e.status}`).join(" ")}, ${summary}`,
            );
          else
            report.unfinishedRuns.push(
              `${head}: calls open ${open.map((e) => `${e.seq}:${e.tool}:${e.status}`).join(" ")}, ${summary}`,
            );
        }
        continue;
      }
      if (run.status === "completed") report.completed += 1;
      const got = run.status === "completed" ? run.view?.["result"] : run.view?.["error"];
      if (run.status !== "completed" || !resultAsExpected(run, got)) {
        report.wrongResults.push(
          `${run.id}: ${run.status} ${JSON.stringify(got)} (expected ${JSON.stringify(run.expected)})`,
        );
      }
    }
    const ids = plan.map((run) => run.id);
    const mine = [...effects.state.effects.entries()].filter(([key]) => ids.some((id) => key.startsWith(`${id}/`)));
    report.effects = mine.length;
    report.duplicateEffects = mine.filter(([, count]) => count !== 1).map(([key, count]) => `${key}×${count}`);
    const sends = [...emails.entries()].filter(([key]) => ids.some((id) => key.startsWith(`${id}/`)));
    report.atMostOnceCalls = sends.length;
    report.atMostOnceRepeated = sends.filter(([, count]) => count > 1).map(([key, count]) => `${key}×${count}`);
    const saidSent = plan.filter(
      (run) =>
        !run.long &&
        run.status === "completed" &&
        (run.view?.["result"] as { email?: unknown } | undefined)?.email === "sent",
    );
    report.atMostOnceSent = saidSent.length;
    report.atMostOnceLost = saidSent
      .filter((run) => !sends.some(([key]) => key.startsWith(`${run.id}/`)))
      .map((run) => run.id);
    for (let i = 0; i < 60; i++) {
      report.eventsDelivered = new Set(
        receiver.events.filter((e) => e.type === "run.completed" && ids.includes(e.runId)).map((e) => e.id),
      ).size;
      if (report.eventsDelivered >= report.completed) break;
      await pause(500);
    }
    report.eventsExpected = report.completed;
    // On a cluster others share, what the round leaves open is ended (its histories stay readable).
    if (!temporal.owned)
      report.terminatedAtEnd = await terminateOpenWorkflows(
        client,
        [taskQueue],
        "the chaos round that started it is over",
        log,
      );
  } finally {
    report.seconds = Math.round((Date.now() - began) / 1000);
    for (const slot of slots) await slot.worker?.kill("SIGKILL").catch(() => undefined);
    // A probe of a run may still be retrying against the stopped server; closing the channel
    // under it throws from the client's retry timer. Close once its retries are over. A cluster
    // the round does not stop answers them: its connections close at once.
    const closeAfter = temporal.owned ? CLOSE_AFTER_RETRIES_MS : 0;
    const closing = temporalClient;
    if (closing) setTimeout(() => void closing.connection.close().catch(() => undefined), closeAfter).unref();
    // The API's client may be retrying a request of the last poll against the stopped server too.
    const stopping = api;
    if (stopping) setTimeout(() => void stopping.stop().catch(() => undefined), closeAfter).unref();
    await mcp.close().catch(() => undefined);
    await receiver.close().catch(() => undefined);
    await temporal.stop().catch(() => undefined);
    if (temporal.owned && (report.stuckRuns.length > 0 || report.unfinishedRuns.length > 0)) report.keptDir = dir;
    else await rm(dir, { recursive: true, force: true });
  }
  return report;
}

/** What Temporal holds for an open run: its pending activities and workflow task, and its last event. */
async function inspectOpen(client: Client, id: string): Promise<string> {
  try {
    const handle = client.workflow.getHandle(id);
    const { raw, historyLength } = await handle.describe();
    const task = raw.pendingWorkflowTask
      ? `a workflow task (state ${raw.pendingWorkflowTask.state}, attempt ${raw.pendingWorkflowTask.attempt})`
      : "no workflow task";
    const events = (await handle.fetchHistory()).events ?? [];
    const last = events.at(-1);
    const failed = events.findLast(
      (event) => event.workflowTaskFailedEventAttributes,
    )?.workflowTaskFailedEventAttributes;
    const failure = failed ? `; last workflow task failure: ${failed.failure?.message ?? `cause ${failed.cause}`}` : "";
    return `Temporal: ${raw.pendingActivities?.length ?? 0} pending activities, ${task}, ${historyLength} events, last ${last ? eventKind(last) : "-"}${failure}`;
  } catch (error) {
    return `Temporal: describe failed (${String(error)})`;
  }
}
