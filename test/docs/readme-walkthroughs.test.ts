/**
 * The README's walkthroughs, run as written against a stack on free ports: `npm start` (against
 * the test run's Temporal), the quick start's curls, the CLI walkthrough with the files of
 * examples/cli/ and `npm run example:server`, and the harness with `--yes`, then stopped with
 * Ctrl-C. Commands and expected output are read from the README's code blocks, so a README that
 * drifts from what the product does fails here. Only the ports (and the ids they change) differ.
 */
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { loadExampleConfig } from "../../src/config.ts";
import type { PinnedToolset } from "../../src/shared/index.ts";
import { toolsetId } from "../../src/storage/index.ts";
import { ticketsUrl } from "../../examples/harness/tickets-server.ts";
import { getFreePort } from "../helpers/free-port.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { TEST_SECRET_KEY } from "../helpers/secret-key.ts";
import { waitFor } from "../helpers/wait-for.ts";
import {
  assertLinesInOrder,
  codeBlocks,
  curlSteps,
  readReadme,
  section,
  transcript,
  type TranscriptStep,
} from "./readme-blocks.ts";
import { rewindBinDir, runShell, spawnShell, type ShellProcess } from "./shell.ts";

const README = readReadme();
const DEFAULT_URL = "http://127.0.0.1:8787";
const DEFAULT_TICKETS_URL = ticketsUrl(loadExampleConfig({}).serverPort);

let stack: ShellProcess;
let ticketsServer: ShellProcess | undefined;
let api: string;
/** Folders this file made, removed at the end. */
const made: string[] = [];
/** What every command gets: a PATH with `rewind` and the project's Node, and REWIND_URL. */
let env: Record<string, string>;

beforeAll(async () => {
  const [apiPort, uiPort, stateDir, binDir] = await Promise.all([
    getFreePort(),
    getFreePort(),
    mkdtemp(path.join(tmpdir(), "rewind-docs-")),
    rewindBinDir(),
  ]);
  made.push(stateDir, binDir);
  const base = {
    PATH: [binDir, path.join(REPO_ROOT, "node_modules/.bin"), process.env["PATH"] ?? ""].join(":"),
    HOME: process.env["HOME"] ?? tmpdir(),
    TEMPORAL_ADDRESS: inject("temporalAddress"),
  };
  expect(codeBlocks(section(README, "Quick start"), "sh")[0]).toContain("npm start");
  stack = spawnShell("npm start", {
    cwd: REPO_ROOT,
    env: {
      ...base,
      REWIND_PORT: String(apiPort),
      TEMPORAL_UI_URL: `http://127.0.0.1:${uiPort}`,
      REWIND_STATE_DIR: stateDir,
      REWIND_SECRET_KEY: TEST_SECRET_KEY.toString("base64"),
      REWIND_TASK_QUEUE: `docs-${apiPort}`,
      REWIND_LOG_LEVEL: "warn",
    },
  });
  api = (await stack.waitFor(/Rewind API\s+(http:\S+)/, 110_000))[1] ?? "";
  env = { ...base, REWIND_URL: api };
});

afterAll(async () => {
  await ticketsServer?.stop("SIGINT");
  await stack?.stop("SIGINT");
  await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** The id the README shows: the toolset `id` names, with its tickets server at the default port. */
async function idAtDefaultPort(id: string): Promise<string> {
  const view = (await (await fetch(`${api}/v1/toolsets/${id}`)).json()) as { document: PinnedToolset };
  const tickets = view.document.mcpServers["tickets"];
  if (!tickets) throw new Error(`toolset ${id} has no tickets server`);
  tickets.url = DEFAULT_TICKETS_URL;
  return toolsetId(view.document);
}

describe("quick start", () => {
  async function curl(command: string): Promise<{ status: number; body: string }> {
    const run = await runShell(`${command.replaceAll(DEFAULT_URL, api)} -w '\\n%{http_code}'`, { cwd: REPO_ROOT, env });
    expect(run.code).toBe(0);
    const at = run.output.lastIndexOf("\n");
    return { body: run.output.slice(0, at), status: Number(run.output.slice(at + 1)) };
  }

  it("starts a run that completes with 42, and refuses a script that does not type-check with 422", async () => {
    const steps = codeBlocks(section(README, "Quick start"), "sh").flatMap(curlSteps);
    expect(steps.map((step) => step.expected.length)).toEqual([1, 1, 1]);
    const [start, read, refuse] = steps as [TranscriptStep, TranscriptStep, TranscriptStep];

    const started = await curl(start.command);
    expect(started.status).toBe(201);
    assertLinesInOrder(started.body, start.expected);
    const { id } = JSON.parse(started.body) as { id: string };

    expect(read.command).toContain("run_01…");
    const done = await waitFor("the run to end", () => curl(read.command.replace("run_01…", id)), {
      until: ({ body }) => !/"status":"(running|parked)"/.test(body),
    });
    expect(done.status).toBe(200);
    assertLinesInOrder(done.body, read.expected);
    expect(JSON.parse(done.body)).toMatchObject({ status: "completed", result: 42 });

    const refused = await curl(refuse.command);
    const [status, ...body] = (refuse.expected[0] ?? "").split(" ");
    expect(refused.status).toBe(Number(status));
    assertLinesInOrder(refused.body, [body.join(" ")]);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: "typeCheckFailed" } });
  });
});

describe("the CLI walkthrough", () => {
  const cli = section(README, "CLI");
  const steps = codeBlocks(cli, "text").flatMap(transcript);
  const [broken, register, triage] = [
    steps.find((step) => step.command.includes("broken.ts")),
    steps.find((step) => step.command.startsWith("rewind toolsets register")),
    steps.find((step) => step.command.includes("triage.ts")),
  ];
  let dir: string;
  /** The README's lines as printed against this test's API: the commands they suggest name it. */
  const viaApi = (lines: string[]) =>
    lines.map((line) => line.replace(/(:\s+)rewind (?!--url)/, `$1rewind --url ${api} `));
  /** The walkthrough's commands, with REWIND_EXAMPLE_PORT naming the tickets server this test starts. */
  let cliEnv: Record<string, string>;

  beforeAll(async () => {
    const port = await getFreePort();
    dir = await mkdtemp(path.join(tmpdir(), "rewind-docs-cli-"));
    made.push(dir);
    await cp(path.join(REPO_ROOT, "examples/cli"), path.join(dir, "examples/cli"), { recursive: true });
    const yaml = await readFile(path.join(dir, "examples/cli/toolset.yaml"), "utf8");
    // toolset.yaml follows REWIND_EXAMPLE_PORT, the port the tickets server listens on.
    expect(yaml).toContain(`url: ${DEFAULT_TICKETS_URL.replace(/:\d+\//, ":${REWIND_EXAMPLE_PORT:-8788}/")}`);
    cliEnv = { ...env, REWIND_EXAMPLE_PORT: String(port) };
    expect(cli.replace(/\s+/g, " ")).toContain("npm run example:server");
    ticketsServer = spawnShell("npm run example:server", {
      cwd: REPO_ROOT,
      env: { ...env, REWIND_EXAMPLE_PORT: String(port) },
    });
    await ticketsServer.waitFor(new RegExp(`tickets MCP server at ${ticketsUrl(port)}`));
  });

  it("registers examples/cli/toolset.yaml, refuses broken.ts as tsc would, and runs triage.ts to its result once approved", async () => {
    if (!broken || !register || !triage)
      throw new Error(`the README's CLI section lacks a step: ${JSON.stringify(steps)}`);
    const registered = await runShell(register.command, { cwd: dir, env: cliEnv });
    expect(registered.code, registered.output).toBe(0);
    assertLinesInOrder(registered.output, viaApi(register.expected));
    const id = /^toolset (ts_[0-9a-f]{64})$/m.exec(registered.output)?.[1] ?? "";
    const readmeId = /^toolset (ts_[0-9a-f]{64})$/m.exec(register.expected.join("\n"))?.[1] ?? "";
    expect(await idAtDefaultPort(id)).toBe(readmeId);
    const withId = (command: string) => command.replaceAll(readmeId, id);

    const refused = await runShell(withId(broken.command), { cwd: dir, env: cliEnv });
    expect(refused.code).toBe(1);
    assertLinesInOrder(refused.output, broken.expected);

    const watch = spawnShell(withId(triage.command), { cwd: dir, env: cliEnv });
    // The hints name the API the command was given (REWIND_URL here, not the default).
    const approve = (await watch.waitFor(/^ {4}approve: (rewind --url \S+ runs approve run_\w+ 2)$/m))[1] ?? "";
    expect(approve).toContain(`--url ${api} `);
    // Pasted in a shell that knows no REWIND_URL, it still reaches the same API.
    const withoutUrl = Object.fromEntries(Object.entries(cliEnv).filter(([name]) => name !== "REWIND_URL"));
    const approved = await runShell(approve, { cwd: dir, env: withoutUrl });
    expect(approved.code).toBe(0);
    const answered = /answered\s+`([^`]+)`/.exec(cli)?.[1] ?? "";
    assertLinesInOrder(approved.output, [answered]);
    const watched = await watch.exited;
    expect(watched.code, watched.output).toBe(0);
    assertLinesInOrder(watched.output, viaApi(triage.expected));
  });
});

describe("the harness", () => {
  const harness = section(README, "A harness, end to end");
  const [commands = ""] = codeBlocks(harness, "sh");
  const [shown = ""] = codeBlocks(harness, "text");
  let port: number;
  beforeAll(async () => {
    port = await getFreePort();
  });
  const harnessEnv = () => ({ ...env, REWIND_EXAMPLE_PORT: String(port) });

  it("npm run example -- --yes shows the README's transcript, and registers the same toolset on every run", async () => {
    const command = /npm run example -- --yes/.exec(commands)?.[0] ?? "";
    expect(command).not.toBe("");
    const first = await runShell(command, { cwd: REPO_ROOT, env: harnessEnv() });
    expect(first.code, first.output).toBe(0);
    // The approve hint names the API the harness was given (REWIND_URL here, not the default).
    assertLinesInOrder(
      first.output,
      shown.split("\n").map((line) => line.replace("npx rewind runs ", `npx rewind --url ${api} runs `)),
    );

    const id = /^toolset (ts_[0-9a-f]{64})$/m.exec(first.output)?.[1] ?? "";
    expect(await idAtDefaultPort(id)).toBe(/^toolset (ts_[0-9a-f]{64})$/m.exec(shown)?.[1]);
    const second = await runShell(command, { cwd: REPO_ROOT, env: harnessEnv() });
    expect(second.code, second.output).toBe(0);
    expect(second.output).toContain(`toolset ${id}\n`);
  });

  it("Ctrl-C cancels the run it started and stops its worker and tickets server", async () => {
    expect(harness).toContain("Ctrl-C cancels the run the harness started");
    const example = spawnShell("npm run example", { cwd: REPO_ROOT, env: harnessEnv() });
    const id = (await example.waitFor(/^run (run_[0-9A-Z]{26})/m))[1] ?? "";
    await example.waitFor(/\? Open a high-priority ticket "Checkout page is slow"\? \[y\/n\] /);
    const { output } = await example.stop("SIGINT");
    expect(output).toContain(`SIGINT: stopping and cancelling ${id}\n`);
    expect(output).toContain(`cancelled ${id}\n`);
    expect(output).toContain("stopped the host tools' worker and the tickets MCP server");
    const run = (await (await fetch(`${api}/v1/runs/${id}`)).json()) as { status: string };
    expect(run.status).toBe("cancelled");
  });
});
