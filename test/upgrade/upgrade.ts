/**
 * `npm run upgrade-test`: runs left open by a release complete on today's code. A worktree of
 * the release (default 3477167, `--from <commit>`) gets its own `npm ci` of its production
 * dependencies (its stack runs on this checkout's Node); its stack starts every scenario of
 * test/histories/scenarios.ts against a dev server persisted to SQLite, and leaves each one
 * waiting (approval, webhook signal, timer, credentials, schema change, child run, between
 * continue-as-new executions, and on releases that have them an unknown outcome, a
 * script's approval, a rollback's revert); runs that just run are left to end. Then the release's
 * stack stops (SIGTERM in one lane, SIGKILL in a second, smaller one), Temporal restarts on the
 * same SQLite file and port, and today's stack starts with the same task queue, state dir and
 * secret key. Each wait is resolved through today's API and every run must end as its scenario
 * expects. Prints one line per run and `N passed, M failed`; exits with 0 only when nothing failed.
 *
 * Options: `--cache` keeps the worktree under .rewind/upgrade/<commit>/ and reuses it while its
 * package-lock and Node match (else a temp dir, removed at the end); `--only a,b` picks
 * scenarios; `--wait-ms` sets how long the scenarios' timers last (default 30 000, so they are
 * still pending when today's stack is up, the line after the switch says whether they were);
 * `--no-kill-lane` skips the SIGKILL lane.
 */
import { execFileSync, spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { existsSync, realpathSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { isDeepStrictEqual, parseArgs } from "node:util";
import { Client } from "@temporalio/client";
import proto from "@temporalio/proto";
import type { DevServer } from "../../src/dev/index.ts";
import { connectClient } from "../../src/temporal/index.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import {
  SCENARIOS,
  forkRun,
  startForkParent,
  type Expected,
  type Scenario,
  type ScenarioWorld,
  type Toolsets,
} from "../histories/scenarios.ts";
import {
  restartTestTemporal,
  startStackProcess,
  startTestTemporal,
  type StackHandle,
} from "../histories/stack-runner.ts";
import { callApi, startWorld, type World } from "../histories/world.ts";
import { waitFor, WaitTimeoutError } from "../helpers/wait-for.ts";

const EventType = proto.temporal.api.enums.v1.EventType;

const { values } = parseArgs({
  options: {
    from: { type: "string", default: "3477167" },
    cache: { type: "boolean", default: process.env["REWIND_UPGRADE_CACHE"] === "1" },
    only: { type: "string" },
    "wait-ms": { type: "string", default: "30000" },
    "no-kill-lane": { type: "boolean", default: false },
  },
});
const WAIT_MS = Number(values["wait-ms"]);
if (!Number.isInteger(WAIT_MS) || WAIT_MS <= 0)
  throw new Error(`--wait-ms must be a positive number of milliseconds, not ${values["wait-ms"]}`);
/** Scenarios the SIGKILL lane repeats: a hard stop under an approval, a signal, a timer and continue-as-new. */
const KILL_LANE = ["approval-approved", "signal-via-webhook", "sleep", "continue-as-new"];
/** Scenarios whose script runs into a sandbox limit by burning CPU (see phase 1). */
const CPU_BOUND = ["cpu-limit", "memory-limit"];

const started = Date.now();
const since = (t: number): string => `${((Date.now() - t) / 1000).toFixed(1)} s`;
const say = (line: string): void => {
  process.stderr.write(`[upgrade ${since(started)}] ${line}\n`);
};
const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

// ---- the release's worktree -------------------------------------------------------------------

const git = (...args: string[]): string =>
  execFileSync("git", args, { cwd: REPO_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

interface Release {
  commit: string;
  root: string;
  remove(): Promise<void>;
}

/** How a release's worktree is installed. */
const RELEASE_INSTALL_FLAGS = ["--omit=dev", "--no-audit", "--no-fund"];

/** What a worktree's node_modules were installed from: its lock file, the flags, Node and the platform. */
const stampOf = (lock: string): string =>
  createHash("sha256")
    .update(lock)
    .update(`\n${RELEASE_INSTALL_FLAGS.join(" ")} ${process.version} ${process.platform} ${process.arch}`)
    .digest("hex");
const stampFile = (root: string): string => path.join(root, "node_modules", ".rewind-upgrade-stamp");

async function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  let output = "";
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", resolve);
  });
  if (code !== 0)
    throw new Error(`${command} ${args.join(" ")} in ${cwd} exited with ${code}:\n${output.slice(-4000)}`);
}

async function removeWorktree(dir: string): Promise<void> {
  try {
    git("worktree", "remove", "--force", dir);
  } catch {
    /* not (or no longer) a worktree */
  }
  await rm(dir, { recursive: true, force: true });
  git("worktree", "prune");
}

async function checkoutRelease(from: string, cache: boolean): Promise<Release> {
  let commit: string;
  try {
    commit = git("rev-parse", "--verify", `${from}^{commit}`);
  } catch {
    throw new Error(
      `${from} is not a commit of this clone's history (a shallow clone needs \`git fetch --unshallow\`)`,
    );
  }
  const short = commit.slice(0, 7);
  const stamp = stampOf(git("show", `${commit}:package-lock.json`));
  const cached = path.join(REPO_ROOT, ".rewind", "upgrade", short);
  if (cache && existsSync(cached)) {
    // A worktree of its own at the commit (not a stray folder inside this checkout).
    const head = (() => {
      try {
        const [top, at] = execFileSync("git", ["rev-parse", "--show-toplevel", "HEAD"], {
          cwd: cached,
          encoding: "utf8",
        })
          .trim()
          .split("\n");
        return top === realpathSync(cached) ? at : "";
      } catch {
        return "";
      }
    })();
    const installed = await readFile(stampFile(cached), "utf8").catch(() => "");
    if (head === commit && installed === stamp) {
      say(`reusing the worktree of ${short} in ${path.relative(REPO_ROOT, cached)} (its package-lock matches)`);
      return { commit: short, root: cached, remove: async () => undefined };
    }
    say(`the cached worktree of ${short} is stale: making it again`);
    await removeWorktree(cached);
  }
  const parent = cache ? path.dirname(cached) : await mkdtemp(path.join(tmpdir(), "rewind-upgrade-"));
  await mkdir(parent, { recursive: true });
  const root = cache ? cached : path.join(parent, short);
  const remove = async (): Promise<void> => {
    await removeWorktree(root);
    if (!cache) await rm(parent, { recursive: true, force: true });
  };
  try {
    git("worktree", "add", "--detach", root, commit);
    const at = Date.now();
    // The release installs its own dependencies: none of this checkout's npm run context leaks in.
    const env = Object.fromEntries(
      Object.entries(process.env).filter(
        ([key]) => !/^(npm_package_|npm_lifecycle_|npm_config_local_prefix$|npm_command$|INIT_CWD$)/.test(key),
      ),
    );
    // Only what its stack runs on: the stack runs on this checkout's Node (stack-runner.ts), and
    // the release's linters, test runner and Node binary would be half the install's CPU, spent
    // beside the suite.
    await run("npm", ["ci", ...RELEASE_INSTALL_FLAGS], root, env);
    say(`npm ci in the worktree of ${short} took ${since(at)}`);
    await writeFile(stampFile(root), stamp);
  } catch (error) {
    await remove();
    throw error;
  }
  return { commit: short, root, remove: cache ? async () => undefined : remove };
}

// ---- lanes and cases ----------------------------------------------------------------------------

/** One release stack stopped one way, then today's stack on its task queue and state dir. */
interface Lane {
  name: string;
  signal: NodeJS.Signals;
  taskQueue: string;
  stateDir: string;
  stack?: StackHandle;
  /** Every stack this lane ran, for their output when something failed. */
  stacks: { label: string; stack: StackHandle }[];
  world: ScenarioWorld;
}

interface Case {
  lane: Lane;
  name: string;
  /** "open": waits across the switch; "ended": ended on the release, read on today's code; "forked": ended on the release, forked on today's code. */
  kind: "open" | "ended" | "forked";
  expected: Expected;
  /** On the release's stack: starts the run and waits until it waits (or ended). */
  before(): Promise<void>;
  /** On today's stack: ends the wait; answers the id of the run to watch. */
  after(): Promise<string>;
  failure?: string;
  outcome?: string;
  /** When the run was seen waiting on the release (its timer, if any, was set just before). */
  waitingAt?: number;
}

/** The shared servers, seen through one lane's current stack. */
function laneWorld(world: World, lane: () => Lane): ScenarioWorld {
  const apis = (): { api: string; continueAsNewApi: string } => {
    const stack = lane().stack;
    if (!stack) throw new Error(`lane ${lane().name} has no stack running`);
    return stack;
  };
  return {
    mcp: world.mcp,
    billing: world.billing,
    guarded: world.guarded,
    changing: world.changing,
    httpHost: world.httpHost,
    hostTaskQueue: world.hostTaskQueue,
    apiUrl: () => apis().api,
    api: (method, route, body, options = {}) =>
      callApi(options.continueAsNew ? apis().continueAsNewApi : apis().api, method, route, body),
  };
}

interface RunView {
  status?: string;
  result?: unknown;
  error?: { message?: string };
}

/** How long a run may take to end once its wait is resolved, beside every other scenario's. */
const END_TIMEOUT_MS = 180_000;

/**
 * Waits until the run has ended and answers its view. A run that does not end in time fails with
 * what was last seen of it: its status and parked calls, as the API showed them, and the last
 * events of its workflow's history (of its latest execution, after a continue-as-new).
 */
async function waitForEnd(world: ScenarioWorld, id: string): Promise<RunView> {
  try {
    return await waitFor(
      `run ${id} to end`,
      async () => {
        const { status, body } = await world.api("GET", `/v1/runs/${id}`);
        if (status >= 300) throw new Error(`GET /v1/runs/${id} answered ${status}: ${JSON.stringify(body)}`);
        return body as RunView & { parked?: unknown; scriptApproval?: unknown };
      },
      {
        until: (view) => view.status !== "running" && view.status !== "parked",
        shown: (view) => ({ status: view.status, parked: view.parked, scriptApproval: view.scriptApproval }),
        timeoutMs: END_TIMEOUT_MS,
        intervalMs: 250,
      },
    );
  } catch (error) {
    if (!(error instanceof WaitTimeoutError)) throw error;
    throw new Error(`${error.message}; ${await lastHistoryEvents(id)}`, { cause: error });
  }
}

/** The last few events of the run's workflow history, in words, for a failure's message. */
async function lastHistoryEvents(id: string, count = 4): Promise<string> {
  if (!temporal) return "no Temporal server to read its history from";
  let connection: Awaited<ReturnType<typeof connectClient>> | undefined;
  try {
    connection = await connectClient({ address: temporal.address }, 5_000);
    const client = new Client({ connection, namespace: temporal.namespace });
    const history = await client.workflow.getHandle(id).fetchHistory();
    const events = (history.events ?? []).slice(-count).map((event) => {
      const type = event.eventType ? (EventType[event.eventType] ?? String(event.eventType)) : "?";
      const at = event.eventTime?.seconds ? new Date(Number(event.eventTime.seconds) * 1000).toISOString() : "?";
      return `#${String(event.eventId)} ${type.replace(/^EVENT_TYPE_/, "")} at ${at}`;
    });
    return `its history (${history.events?.length ?? 0} events) ends with ${events.join(", ")}`;
  } catch (error) {
    return `its history could not be read: ${message(error)}`;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

/** Why the run did not end as expected, or undefined. */
function mismatch(view: RunView, expected: Expected): string | undefined {
  const wrong =
    view.status !== expected.status ||
    ("result" in expected && !isDeepStrictEqual(view.result, expected.result)) ||
    (expected.error !== undefined && !(view.error?.message ?? "").includes(expected.error));
  if (!wrong) return undefined;
  const got = {
    status: view.status,
    ...("result" in view ? { result: view.result } : {}),
    ...(view.error ? { error: view.error.message } : {}),
  };
  return `ended ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`;
}

function scenarioCase(lane: Lane, scenario: Scenario, toolsets: Toolsets): Case {
  let id = "";
  return {
    lane,
    name: scenario.name,
    kind: scenario.waiting ? "open" : "ended",
    expected: scenario.expected,
    async before() {
      id = await scenario.start(lane.world, toolsets, { waitMs: WAIT_MS });
      if (scenario.waiting) await scenario.waiting(lane.world, id);
      else await waitForEnd(lane.world, id);
    },
    async after() {
      await scenario.resolve?.(lane.world, id, toolsets);
      return id;
    },
  };
}

/** A run that failed on the release, forked on today's code. */
function forkCase(lane: Lane, toolsets: Toolsets): Case {
  let parent = "";
  return {
    lane,
    name: "fork-of-a-release-run",
    kind: "forked",
    expected: { status: "completed", result: 2 },
    async before() {
      parent = await startForkParent(lane.world, toolsets);
    },
    after: () => forkRun(lane.world, parent),
  };
}

/** Stops a stack with `signal`; false when it had to be killed after `ms`. */
async function stopWithin(stack: StackHandle, signal: NodeJS.Signals, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const stopped = await Promise.race([stack.stop(signal).then(() => true as const), late]);
  clearTimeout(timer);
  if (!stopped) await stack.stop("SIGKILL");
  return stopped;
}

// ---- the test -----------------------------------------------------------------------------------

const chosen = SCENARIOS.filter((s) => values.only === undefined || values.only.split(",").includes(s.name));
const cases: Case[] = [];
const lanes: Lane[] = [];
const notes: string[] = [];
let setupFailure: string | undefined;
let release: Release | undefined;
let temporal: DevServer | undefined;
let world: World | undefined;
const work = await mkdtemp(path.join(tmpdir(), "rewind-upgrade-state-"));

try {
  release = await checkoutRelease(values.from, values.cache);
  const dbFile = path.join(work, "temporal.sqlite");
  temporal = await startTestTemporal(dbFile);
  const address = temporal.address;
  say(`Temporal dev server at ${address}, state in ${dbFile}`);
  const shared = await startWorld();
  world = shared;
  for (const [name, signal] of [["term", "SIGTERM"], ...(values["no-kill-lane"] ? [] : [["kill", "SIGKILL"]])] as [
    string,
    NodeJS.Signals,
  ][]) {
    const lane: Lane = {
      name,
      signal,
      taskQueue: `upgrade-${name}-${randomUUID()}`,
      stateDir: path.join(work, `state-${name}`),
      stacks: [],
      world: laneWorld(shared, () => lane),
    };
    lanes.push(lane);
  }
  const releaseRoot = release.root;
  await Promise.all(
    lanes.map(async (lane) => {
      lane.stack = await startStackProcess({
        root: releaseRoot,
        temporalAddress: address,
        taskQueue: lane.taskQueue,
        stateDir: lane.stateDir,
      });
      lane.stacks.push({ label: `${release?.commit} (${lane.name})`, stack: lane.stack });
    }),
  );
  const [first] = lanes;
  if (!first?.stack) throw new Error("no lane started");
  shared.useApis({ main: first.stack.api, continueAsNew: first.stack.continueAsNewApi });
  await shared.startHostWorker(address, temporal.namespace);
  const toolsets = await shared.prepare();
  say(`release ${release.commit} is up in ${lanes.length} lane(s); starting ${chosen.length} scenarios`);

  const releaseCommit = release.commit;
  const releaseHas = (commit: string): boolean => {
    try {
      git("merge-base", "--is-ancestor", commit, releaseCommit);
      return true;
    } catch {
      return false;
    }
  };
  const runnable = chosen.filter((s) => s.since === undefined || releaseHas(s.since));
  for (const s of chosen.filter((c) => !runnable.includes(c)))
    notes.push(`${s.name} skipped: it needs ${s.since ?? ""}, which ${releaseCommit} predates`);
  for (const lane of lanes) {
    const mine = lane.name === "term" ? runnable : runnable.filter((s) => KILL_LANE.includes(s.name));
    cases.push(...mine.map((s) => scenarioCase(lane, s, toolsets)));
    if (lane.name === "term" && values.only === undefined) cases.push(forkCase(lane, toolsets));
  }

  // 1. On the release: every run starts and is left waiting (or ends). The scenarios that spend
  // their step's CPU limit on purpose run first, one at a time, before the timers start: the release's limit is wall time, so
  // beside the others a script that fills its memory in about 1 s of CPU was failed for CPU instead.
  const phase = Date.now();
  const startOnRelease = async (c: Case) => {
    const at = Date.now();
    try {
      await c.before();
      c.waitingAt = Date.now();
    } catch (error) {
      c.failure = `on the release: ${message(error)}`;
    }
    say(
      `${c.lane.name}/${c.name} ${c.kind === "open" ? "waits" : "ended"} after ${since(at)}${c.failure ? ` (${c.failure})` : ""}`,
    );
  };
  for (const c of cases.filter((c) => CPU_BOUND.includes(c.name))) await startOnRelease(c);
  await Promise.all(cases.filter((c) => !CPU_BOUND.includes(c.name)).map(startOnRelease));
  const open = cases.filter((c) => c.kind === "open" && !c.failure).length;
  say(`on the release: ${open} runs waiting, ${cases.filter((c) => c.failure).length} failed, after ${since(phase)}`);

  // 2. The switch: the release's stacks stop, Temporal restarts on its file, today's stacks start.
  const switchAt = Date.now();
  await Promise.all(
    lanes.map(async (lane) => {
      if (lane.stack && !(await stopWithin(lane.stack, lane.signal, 30_000)))
        notes.push(`the release's stack (${lane.name}) ignored ${lane.signal} for 30 s and was killed`);
    }),
  );
  lanes.forEach((lane) => {
    delete lane.stack;
  });
  await temporal.stop();
  temporal = await restartTestTemporal(address, dbFile);
  say(`Temporal restarted at ${temporal.address} on the same SQLite file`);
  await Promise.all(
    lanes.map(async (lane) => {
      lane.stack = await startStackProcess({
        root: REPO_ROOT,
        temporalAddress: address,
        taskQueue: lane.taskQueue,
        stateDir: lane.stateDir,
      });
      lane.stacks.push({ label: `today (${lane.name})`, stack: lane.stack });
    }),
  );
  shared.useApis({ main: first.stack.api, continueAsNew: first.stack.continueAsNewApi });
  // A scenario's timer starts right after the step its `waiting` sees (within a second or two).
  const oldest = Math.min(
    Date.now(),
    ...cases.filter((c) => c.kind === "open" && c.waitingAt !== undefined).map((c) => c.waitingAt ?? 0),
  );
  notes.push(
    `the release ran ${((switchAt - phase) / 1000).toFixed(1)} s; the switch (stop, Temporal restart, today's stack up) took ${since(switchAt)}; ` +
      `the first run was left waiting ${since(oldest)} before today's stack was up, so ` +
      (Date.now() - oldest + 2000 < WAIT_MS
        ? `every ${WAIT_MS} ms timer was still pending`
        : `some ${WAIT_MS} ms timers may have fired before (a larger --wait-ms keeps them pending)`),
  );
  say(notes.at(-1) ?? "");

  // 3. On today's code: each wait is resolved and each run ends as expected.
  await Promise.all(
    cases
      .filter((c) => !c.failure)
      .map(async (c) => {
        const at = Date.now();
        try {
          const id = await c.after();
          const view = await waitForEnd(c.lane.world, id);
          const wrong = mismatch(view, c.expected);
          if (wrong) c.failure = `on today's code: run ${id} ${wrong}`;
          else
            c.outcome = `${view.status} ${{ open: `${since(at)} after the switch`, ended: "(read on today's code)", forked: "(the fork, made on today's code)" }[c.kind]}`;
        } catch (error) {
          c.failure = `on today's code: ${message(error)}`;
        }
        say(`${c.failure ? "FAIL" : "ok  "} ${c.lane.name}/${c.name}`);
      }),
  );
} catch (error) {
  setupFailure = error instanceof Error ? (error.stack ?? error.message) : String(error);
} finally {
  await Promise.all(lanes.map((lane) => lane.stack?.stop().catch(() => undefined)));
  await world?.close().catch(() => undefined);
  await temporal?.stop().catch(() => undefined);
  await release?.remove().catch((error: unknown) => say(`could not remove the worktree: ${message(error)}`));
  await rm(work, { recursive: true, force: true });
}

const failed = cases.filter((c) => c.failure !== undefined || c.outcome === undefined);
const passed = cases.length - failed.length;
const out: string[] = [
  `upgrade from ${release?.commit ?? values.from} to today's code (${process.version}), in ${since(started)}:`,
];
for (const c of cases) {
  const label = `${c.lane.name}/${c.name}`.padEnd(36);
  out.push(
    c.outcome !== undefined && c.failure === undefined
      ? `  ok    ${label} ${c.outcome}`
      : `  FAIL  ${label} ${c.failure ?? "not run"}`,
  );
}
if (setupFailure) out.push(`  FAIL  the test itself: ${setupFailure}`);
out.push(...notes.map((note) => `  note: ${note}`));
if (failed.length > 0 || setupFailure) {
  for (const lane of lanes) {
    for (const { label, stack } of lane.stacks) {
      const tail = stack.output().trim().split("\n").slice(-30).join("\n    ");
      if (tail) out.push(`\nstderr of the stack of ${label}:\n    ${tail}`);
    }
  }
}
out.push(`${passed} passed, ${failed.length + (setupFailure ? 1 : 0)} failed`);
process.stdout.write(`${out.join("\n")}\n`);
process.exit(failed.length === 0 && !setupFailure ? 0 : 1);
