/**
 * A small harness on Rewind: it serves the host tool `harness.ask_user` (answered in this
 * terminal), registers a toolset with the tickets MCP server, shows the declarations a model would
 * see, runs the model's script, waits for the approval the script needs, and prints the result.
 * Ctrl-C cancels the run it started before it stops, so no run is left parked behind it.
 *
 *   npm start                      # in one terminal: Temporal, the Rewind worker and the API
 *   npm run example                # in another: this harness (add -- --yes to answer for you)
 */
import { readFile } from "node:fs/promises";
import { ConfigError } from "../../src/config.ts";
import {
  createApiClient,
  createHostToolWorker,
  RewindApiError,
  type ApiClient,
  type HostToolWorker,
} from "../../src/sdk/index.ts";
import { cancelRun } from "./cancel-run.ts";
import { followRun } from "./follow-run.ts";
import { harnessOptions, USAGE, UsageError, type HarnessOptions } from "./harness-options.ts";
import { askUserTool, harnessToolset, HOST_TOOLS_TASK_QUEUE } from "./harness-tools.ts";
import { useOrStartTicketsServer } from "./tickets-endpoint.ts";

/** The run this harness started, while it may still be going. */
let current: string | undefined;

async function runHarness(options: HarnessOptions, api: ApiClient, signal: AbortSignal, interrupt: () => void) {
  // The API first: a stack that is not running is reported at once, not after Temporal's retries.
  await api.listRuns({ pageSize: 1 });
  const tickets = await useOrStartTicketsServer(options.serverPort);
  const how = tickets.startedHere ? "started here; npm run example:server keeps one running" : "already running";
  console.log(`tickets MCP server ${tickets.url} (${how})`);
  console.log(`Temporal ${options.temporal.address} (${options.temporalSource}) · Rewind API ${api.url}`);
  let worker: HostToolWorker | undefined;
  let serving: Promise<void> | undefined;
  try {
    worker = await createHostToolWorker({
      ...options.temporal,
      taskQueue: HOST_TOOLS_TASK_QUEUE,
      tools: { "harness.ask_user": askUserTool({ yes: options.yes, stopping: signal, onInterrupt: interrupt }) },
    });
    serving = worker.run();
    const toolset = await api.registerToolset(harnessToolset(tickets.url));
    console.log(`toolset ${toolset.id}\n\nWhat the model sees:\n`);
    console.log(await api.getDeclarations(toolset.id, "prompt"));

    const script = await readFile(new URL("./script.ts", import.meta.url), "utf8");
    signal.throwIfAborted();
    const run = await api.startRun({ toolset: toolset.id, script, input: { title: "Checkout page is slow" } });
    current = run.id;
    console.log(`\nrun ${run.id}  ${run.temporalUrl ?? ""}`);
    const end = await followRun({ api, id: run.id, approve: options.yes, signal });
    current = undefined;
    console.log(`\n${end.status}: ${JSON.stringify(end.result ?? end.error)}`);
    if (end.status !== "completed") process.exitCode = 1;
  } finally {
    // The run is cancelled first, while the worker still serves the call it may be waiting on.
    if (current !== undefined) console.log(await cancelRun(api, current));
    await worker?.shutdown();
    await serving?.catch(() => undefined);
    await tickets.close();
    if (signal.aborted)
      console.log(`stopped the host tools' worker${tickets.startedHere ? " and the tickets MCP server" : ""}`);
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(USAGE);
    return;
  }
  const options = await harnessOptions(argv);
  const api = createApiClient(options.api);
  const stopping = new AbortController();
  const stop = (signal: NodeJS.Signals) => {
    if (stopping.signal.aborted) return;
    console.log(`\n${signal}: stopping${current ? ` and cancelling ${current}` : ""}`);
    stopping.abort(new Error(signal));
    // With no run to cancel, nothing waits on the way out but a connection still being tried.
    if (current === undefined) setTimeout(() => process.exit(130), 3_000).unref();
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
  try {
    await runHarness(options, api, stopping.signal, () => stop("SIGINT"));
  } catch (error) {
    if (!stopping.signal.aborted) throw error;
    process.exitCode = 130;
  }
}

main().catch((error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`example: ${error.message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const message = error instanceof ConfigError || error instanceof Error ? error.message : String(error);
  const hint =
    error instanceof RewindApiError && error.code === "unreachable"
      ? "\nIs the stack running (npm start)? REWIND_URL or --api says where its API is."
      : "";
  process.stderr.write(`example: ${message}${hint}\n`);
  process.exitCode = 1;
});
