/**
 * `npm run bench`: starts a Temporal dev server (in memory, headless), the MCP server, the Rewind
 * API and both workers, measures Rewind against a plain Temporal workflow and direct MCP calls,
 * prints the tables and the performance targets' verdicts (bench/targets.ts), and writes every sample to
 * bench/results/<timestamp>.json.
 *
 *   npm run bench                      # the full bench (a few minutes)
 *   npm run bench -- --quick           # everything shrunk, a smoke run
 *   npm run bench -- --only=overhead,scaling
 *   npm run bench -- --only large-results
 *   npm run bench -- --profile         # also CPU-profile the workers' process (bench/results/profiles-…)
 *   npm run bench -- --temporal 127.0.0.1:17233 --namespace rewind   # on an existing cluster
 *
 * With `--temporal` no dev server is started: the cluster's namespace (set up by `rewind setup`)
 * gets the bench's runs on task queues of their own, TLS or an API key come from the usual
 * TEMPORAL_* settings, and what is left open on those queues is terminated at the end.
 */
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createConsoleLogger } from "../src/cli/console-logger.ts";
import { ACCELERATORS, parseAccelerators, temporalEnvironment } from "../src/config.ts";
import { installTemporalRuntime } from "../src/temporal/temporal-runtime.ts";
import { FULL, QUICK, type BenchContext } from "./context.ts";
import { renderReport, type BenchResults } from "./report.ts";
import { measureIdle } from "./scenarios/idle.ts";
import { measureLargeResults } from "./scenarios/large-results.ts";
import { measureOverhead } from "./scenarios/overhead.ts";
import { measureSandbox } from "./scenarios/sandbox-steps.ts";
import { measureScaling } from "./scenarios/scaling.ts";
import { measureStartLatency } from "./scenarios/start-latency.ts";
import { measureLargeToolset } from "./scenarios/large-toolset.ts";
import { measurePayloads } from "./scenarios/payloads.ts";
import { measureThroughput } from "./scenarios/throughput.ts";
import { measureModelContext } from "./scenarios/model-context.ts";
import { measureTwoWorkers } from "./scenarios/two-workers.ts";
import { measureTypeCheck } from "./scenarios/type-check.ts";
import { measureWorkflowReplay } from "./scenarios/workflow-replay.ts";
import { evaluateTargets } from "./targets.ts";
import { BENCH_DIR, REPO_ROOT, startBenchStack, type WorkerMemory } from "./stack.ts";

const SCENARIOS = [
  "typecheck",
  "sandbox",
  "start",
  "overhead",
  "replay",
  "scaling",
  "throughput",
  "large-results",
  "idle",
  "large-toolset",
  "payloads",
  "two-workers",
  "model-context",
] as const;
type Scenario = (typeof SCENARIOS)[number];

interface BenchArgs {
  quick: boolean;
  profile: boolean;
  only: Set<Scenario>;
  acceleratorsOff: string;
  /** `--temporal ADDRESS`: an existing cluster instead of a dev server of the bench's own. */
  temporal: string | undefined;
  namespace: string | undefined;
}

/** `--name value` or `--name=value`; advances past the value. */
function flagValue(argv: string[], i: number, name: string): [string, number] {
  const arg = argv[i] ?? "";
  if (arg.startsWith(`${name}=`)) return [arg.slice(name.length + 1), i];
  const value = argv[i + 1];
  if (value === undefined || value.startsWith("--")) throw new Error(`${name} needs a value`);
  return [value, i + 1];
}

function parseArgs(argv: string[]): BenchArgs {
  let quick = false;
  let profile = false;
  let acceleratorsOff = "";
  let temporal: string | undefined;
  let namespace: string | undefined;
  let only = new Set<Scenario>(SCENARIOS);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--temporal" || arg.startsWith("--temporal=")) [temporal, i] = flagValue(argv, i, "--temporal");
    else if (arg === "--namespace" || arg.startsWith("--namespace="))
      [namespace, i] = flagValue(argv, i, "--namespace");
    else if (arg === "--quick") quick = true;
    else if (arg === "--profile") profile = true;
    else if (arg === "--only" || arg.startsWith("--only=")) {
      const list = arg === "--only" ? (argv[++i] ?? "") : arg.slice("--only=".length);
      const names = list.split(",").filter(Boolean);
      if (names.length === 0) throw new Error(`--only needs scenarios: ${SCENARIOS.join(",")}`);
      for (const name of names)
        if (!(SCENARIOS as readonly string[]).includes(name))
          throw new Error(`unknown scenario ${name}; one of ${SCENARIOS.join(", ")}`);
      only = new Set(names as Scenario[]);
    } else if (arg.startsWith("--accelerators-off=")) {
      acceleratorsOff = arg.slice("--accelerators-off=".length);
      parseAccelerators(acceleratorsOff);
    } else throw new Error(`unknown argument ${arg}; use --quick, --profile, --only=${SCENARIOS.join(",")}`);
  }
  if (namespace !== undefined && temporal === undefined) throw new Error("--namespace goes with --temporal");
  return { quick, profile, only, acceleratorsOff, temporal, namespace };
}

function commit(): string {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: REPO_ROOT, encoding: "utf8" }).trim();
    const dirty =
      execFileSync("git", ["status", "--porcelain", "--", "src"], { cwd: REPO_ROOT, encoding: "utf8" }).trim() !== "";
    return dirty ? `${sha} (src/ modified)` : sha;
  } catch {
    return "unknown";
  }
}

const HELP = `usage: npm run bench -- [--quick] [--profile] [--only=<scenario,…>]

  (no options)   the full bench: every scenario, a few minutes
  --quick        every scenario shrunk: a smoke run
  --only=a,b     only these scenarios (also --only a,b): ${SCENARIOS.join(", ")}
  --profile      also CPU-profile the workers' process (bench/results/profiles-…)
  --accelerators-off=a,b
                 Rewind with these accelerators off (or all): ${ACCELERATORS.join(", ")}
  --temporal ADDRESS [--namespace NS]
                 on that Temporal cluster (set up by \`rewind setup\`; TLS and API key from the
                 TEMPORAL_* settings), not on a dev server of the bench's own
  --help, -h     this text

Prints the tables and the targets' verdicts, and writes every sample to bench/results/<timestamp>.json.
`;

/** Wrong arguments: one sentence and the options, exit code 2 (not a stack trace). */
function argsOrExit(argv: string[]): BenchArgs {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  try {
    return parseArgs(argv);
  } catch (error) {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n\n${HELP}`);
    process.exit(2);
  }
}

const args = argsOrExit(process.argv.slice(2));
const benchStarted = performance.now();
const stamp = new Date().toISOString().replace(/[:.]/g, "-");
const resultsDir = path.join(BENCH_DIR, "results");
const log = (line: string): void => {
  process.stderr.write(`[bench +${((performance.now() - benchStarted) / 1000).toFixed(0)}s] ${line}\n`);
};

const cpus = os.cpus();
const results: BenchResults = {
  meta: {
    date: new Date().toISOString(),
    mode: args.quick ? "quick" : "full",
    commit: commit(),
    node: process.version,
    cpus: `${cpus.length} × ${cpus[0]?.model.trim() ?? "cpu"}`,
    memory: `${(os.totalmem() / 1024 ** 3).toFixed(0)} GB`,
    loadAverageAtStart: os.loadavg().map((l) => Number(l.toFixed(2))),
    scenarios: [...args.only],
    acceleratorsOff: args.acceleratorsOff || "none",
    temporal: args.temporal ? `cluster ${args.temporal}, namespace ${args.namespace ?? "default"}` : "dev server",
  },
};

// Workflow replays run in this process; keep the SDK's own log to warnings.
installTemporalRuntime(createConsoleLogger("warn", "temporal-sdk"), "WARN");
log(`starting ${args.temporal ? "" : "the Temporal dev server, "}the MCP server, the API and the workers`);
const profileDir = args.profile ? path.join(resultsDir, `profiles-${stamp}`) : undefined;
const cluster = args.temporal
  ? {
      env: {
        ...temporalEnvironment(),
        TEMPORAL_ADDRESS: args.temporal,
        ...(args.namespace ? { TEMPORAL_NAMESPACE: args.namespace } : {}),
      },
    }
  : undefined;
const stack = await startBenchStack({ log, profileDir, acceleratorsOff: args.acceleratorsOff, cluster });
log(
  `stack ready: Temporal ${stack.address}, API ${stack.api.url}, MCP ${stack.mcpUrl}, workers pid ${stack.workersPid}`,
);
const idle = await stack.workers.call<WorkerMemory>("memory");
results.meta["workersIdleRssMb"] = Math.round(idle.rss / 1024 / 1024);
const ctx: BenchContext = { stack, sizes: args.quick ? QUICK : FULL, log };
let failed: unknown;
try {
  if (args.only.has("typecheck")) results.typeCheck = measureTypeCheck(ctx);
  if (args.only.has("sandbox")) results.sandbox = await measureSandbox(ctx);
  if (args.only.has("start")) results.start = await measureStartLatency(ctx);
  if (args.only.has("overhead")) results.overhead = await measureOverhead(ctx);
  if (args.only.has("replay")) results.replay = await measureWorkflowReplay(ctx);
  if (args.only.has("scaling")) results.scaling = await measureScaling(ctx);
  if (args.only.has("throughput")) results.throughput = await measureThroughput(ctx);
  if (args.only.has("large-results")) results.largeResults = await measureLargeResults(ctx);
  if (args.only.has("large-toolset")) results.largeToolset = await measureLargeToolset(ctx);
  if (args.only.has("payloads")) results.payloads = await measurePayloads(ctx);
  if (args.only.has("two-workers")) results.twoWorkers = await measureTwoWorkers(ctx);
  if (args.only.has("idle")) results.idle = await measureIdle(ctx);
  if (args.only.has("model-context")) results.modelContext = await measureModelContext(ctx);
} catch (error) {
  failed = error;
  log(`a measurement failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
} finally {
  log("stopping");
  await stack.stop();
}

results.targets = evaluateTargets(results);
results.meta["durationSec"] = Math.round((performance.now() - benchStarted) / 1000);
results.meta["loadAverageAtEnd"] = os.loadavg().map((l) => Number(l.toFixed(2)));
if (profileDir) results.meta["profiles"] = path.relative(REPO_ROOT, profileDir);
const report = renderReport(results);
process.stdout.write(`${report}\n`);
await mkdir(resultsDir, { recursive: true });
const file = path.join(resultsDir, `${stamp}.json`);
await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
await writeFile(path.join(resultsDir, `${stamp}.md`), `${report}\n`);
log(`wrote ${path.relative(REPO_ROOT, file)} in ${results.meta["durationSec"]} s`);
if (failed) process.exitCode = 1;
