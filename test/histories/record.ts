/**
 * `npm run record-histories`: records the replay corpus from the code of this checkout. It runs
 * every scenario against a real dev server, a real worker and real MCP servers; a run that
 * waits is recorded twice, while it waits (an open history, as an upgrade would find it) and
 * after it ended. Every execution of a continued run is kept, and so are the child runs, event
 * deliveries and toolset records the scenarios made. Files go to `test/histories/<release>/`
 * (release: the commit, or `--release`), and are kept forever: CI replays them all.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { isDeepStrictEqual, parseArgs } from "node:util";
import { Client } from "@temporalio/client";
import { connectClient } from "../../src/temporal/index.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { SCENARIOS, startFork, until, type Expected, type Scenario, type Toolsets } from "./scenarios.ts";
import { startStackProcess, startTestTemporal } from "./stack-runner.ts";
import { startWorld, type World } from "./world.ts";
import { HISTORY_FORMAT, encodeHistory, referencesIn, type HistoryFile } from "./history-file.ts";

const { values } = parseArgs({ options: { release: { type: "string" }, only: { type: "string" } } });
const release =
  values.release ??
  execFileSync("git", ["rev-parse", "--short=7", "HEAD"], { cwd: REPO_ROOT, encoding: "utf8" }).trim();
const outDir = path.join(REPO_ROOT, "test", "histories", release);
const WAIT_MS = 1500;

interface RunView {
  status?: string;
  result?: unknown;
  error?: { type?: string; message?: string };
}

async function waitForEnd(world: World, id: string): Promise<RunView> {
  return until(
    `run ${id} to end`,
    async () => {
      const { body } = await world.api("GET", `/v1/runs/${id}`);
      return body["status"] === "running" || body["status"] === "parked" ? undefined : (body as RunView);
    },
    120_000,
  );
}

function check(name: string, view: RunView, expected: Expected): void {
  const wrong =
    view.status !== expected.status ||
    ("result" in expected && !isDeepStrictEqual(view.result, expected.result)) ||
    (expected.error !== undefined && !(view.error?.message ?? "").includes(expected.error));
  if (wrong) throw new Error(`scenario ${name} ended ${JSON.stringify(view)}, expected ${JSON.stringify(expected)}`);
}

const temporal = await startTestTemporal();
const stateDir = await mkdtemp(path.join(tmpdir(), "rewind-record-"));
const world = await startWorld();
// Payloads over the threshold are kept beside the histories: replaying them needs them.
const payloadDir = await mkdtemp(path.join(tmpdir(), "rewind-record-payloads-"));
const stack = await startStackProcess({
  root: REPO_ROOT,
  temporalAddress: temporal.address,
  taskQueue: `record-${randomUUID()}`,
  stateDir,
  payloadDir,
});
const connection = await connectClient({ address: temporal.address });
const client = new Client({ connection, namespace: temporal.namespace });
const files: HistoryFile[] = [];
/** Workflow id → scenario name, for the runs the scenarios started themselves. */
const named = new Map<string, string>();

async function keep(
  scenario: string,
  workflowId: string,
  closed: boolean,
  cassette?: unknown,
  outcome?: RunView,
): Promise<void> {
  let execution = 0;
  const executions: { runId: string; type: string }[] = [];
  for await (const info of client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    executions.push({ runId: info.runId, type: info.type });
  // Oldest first: a continued run's executions in the order they ran.
  executions.reverse();
  for (const { runId, type } of executions) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const last = execution === executions.length - 1;
    files.push({
      format: HISTORY_FORMAT,
      release,
      scenario,
      workflowType: type,
      workflowId,
      runId,
      closed: closed || !last,
      execution,
      history: encodeHistory(history),
      events: history.events?.length ?? 0,
      ...(cassette !== undefined && last && closed ? { cassette } : {}),
      ...(outcome !== undefined && last && closed
        ? {
            outcome: {
              status: String(outcome.status),
              ...("result" in outcome ? { result: outcome.result } : {}),
              ...(outcome.error?.message ? { error: outcome.error.message } : {}),
            },
          }
        : {}),
    });
    execution += 1;
  }
}

async function executionsSettled(workflowId: string, atLeast: number): Promise<void> {
  // Visibility is eventually consistent; wait for every execution to be listed.
  await until(
    `${workflowId} in visibility`,
    async () => {
      let count = 0;
      for await (const _ of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) count += 1;
      return count >= atLeast ? true : undefined;
    },
    20_000,
  );
}

async function play(scenario: Scenario, toolsets: Toolsets): Promise<void> {
  const id = await scenario.start(world, toolsets, { waitMs: WAIT_MS });
  named.set(id, scenario.name);
  if (scenario.waiting) {
    await scenario.waiting(world, id);
    await executionsSettled(id, 1);
    await keep(`${scenario.name}.open`, id, false);
  }
  await scenario.resolve?.(world, id, toolsets);
  const view = await waitForEnd(world, id);
  check(scenario.name, view, scenario.expected);
  await executionsSettled(id, scenario.name === "continue-as-new" ? 2 : 1);
  // A cancelled run has no ending to replay, and a rejected script never ran.
  const replayable = view.status !== "cancelled" && view.error?.type !== "ScriptRejected";
  const cassette = replayable ? (await world.api("GET", `/v1/runs/${id}/cassette`)).body : undefined;
  await keep(scenario.name, id, true, cassette, view);
}

try {
  world.useApis({ main: stack.api, continueAsNew: stack.continueAsNewApi });
  await world.startHostWorker(temporal.address, temporal.namespace);
  const toolsets = await world.prepare();
  const chosen = SCENARIOS.filter((s) => values.only === undefined || values.only.split(",").includes(s.name));
  await Promise.all(chosen.map((scenario) => play(scenario, toolsets)));
  if (values.only === undefined) {
    const { parent, fork } = await startFork(world, toolsets);
    named.set(parent, "fork-parent");
    named.set(fork, "fork");
    const forked = await waitForEnd(world, fork);
    check("fork", forked, { status: "completed", result: 2 });
    await keep(
      "fork-parent",
      parent,
      true,
      (await world.api("GET", `/v1/runs/${parent}/cassette`)).body,
      await waitForEnd(world, parent),
    );
    await keep("fork", fork, true, (await world.api("GET", `/v1/runs/${fork}/cassette`)).body, forked);
  }
  // Everything else the scenarios made: child runs, event deliveries, toolset and workflow records.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const perType = new Map<string, number>();
  const others: { workflowId: string; type: string; closed: boolean }[] = [];
  for await (const info of client.workflow.list()) {
    if (named.has(info.workflowId) || others.some((o) => o.workflowId === info.workflowId)) continue;
    // Runs nobody named are the children the scenarios started.
    const type = info.type === "runScript" ? "child-run" : info.type;
    others.push({ workflowId: info.workflowId, type, closed: info.status.name !== "RUNNING" });
  }
  for (const other of others) {
    const count = (perType.get(other.type) ?? 0) + 1;
    // Deliveries are all alike: a few are enough.
    if (other.type === "deliverEventWorkflow" && count > 4) continue;
    perType.set(other.type, count);
    await keep(`${other.type}-${count}`, other.workflowId, other.closed);
  }
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const referenced = new Set(files.flatMap((file) => referencesIn(file.history)));
  if (referenced.size > 0) {
    await mkdir(path.join(outDir, "payloads"), { recursive: true });
    for (const hash of referenced)
      await copyFile(path.join(payloadDir, hash.slice(0, 2), hash), path.join(outDir, "payloads", hash));
  }
  for (const file of files) {
    const name = `${file.scenario}${file.execution > 0 || files.some((f) => f !== file && f.scenario === file.scenario) ? `.${file.execution}` : ""}.json`;
    await writeFile(path.join(outDir, name), `${JSON.stringify(file)}\n`);
  }
  process.stdout.write(
    `recorded ${files.length} histories of release ${release} into ${path.relative(REPO_ROOT, outDir)}\n`,
  );
} finally {
  await stack.stop();
  await world.close();
  await connection.close();
  await temporal.stop();
  await rm(stateDir, { recursive: true, force: true });
  await rm(payloadDir, { recursive: true, force: true });
}
process.exit(0);
