/**
 * `npm start` killed outright (SIGKILL: nothing forwards a stop) must not leave the stack it
 * launched running. A stand-in for npm launches `rewind dev` as npm does (its own child, with
 * `npm_lifecycle_event` set, output to a file so nothing of the launcher's is needed to log), and
 * is SIGKILLed: the stack notices it was orphaned, says so and stops. Launched without the npm
 * variable (a shell's `nohup rewind dev &`), the same stack lives on: the test stops it itself.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { isAlive } from "../../src/dev/process-alive.ts";
import { getFreePort } from "../helpers/free-port.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { TEST_SECRET_KEY } from "../helpers/secret-key.ts";
import { waitFor } from "../helpers/wait-for.ts";

let dir: string;
const strays: number[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "rewind-npm-start-"));
});
afterAll(async () => {
  for (const pid of strays) if (pid > 1 && isAlive(pid)) process.kill(pid, "SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

/** What the stand-in for npm runs: spawns `rewind dev` with its output to a file, prints its pid, and waits. */
const LAUNCHER = `
const { spawn } = require("node:child_process");
const { openSync } = require("node:fs");
const [main, log] = process.argv.slice(1);
const out = openSync(log, "a");
const child = spawn(process.execPath, ["--no-node-snapshot", "--disable-warning=ExperimentalWarning", main, "dev"], {
  stdio: ["ignore", out, out],
  env: process.env,
});
process.stdout.write("dev " + child.pid + "\\n");
setInterval(() => undefined, 60000);
`;

/** Launches `rewind dev` under a stand-in for npm and waits for the stack to answer; answers both pids. */
async function launch(env: Record<string, string>, log: string): Promise<{ launcher: number; dev: number }> {
  const port = await getFreePort();
  const launcher = spawn(process.execPath, ["-e", LAUNCHER, path.join(REPO_ROOT, "src/cli/main.ts"), log], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env["PATH"] ?? "",
      TEMPORAL_ADDRESS: inject("temporalAddress"),
      REWIND_SECRET_KEY: TEST_SECRET_KEY.toString("base64"),
      REWIND_STATE_DIR: path.join(REPO_ROOT, ".rewind"),
      REWIND_TASK_QUEUE: `npm-start-${randomUUID()}`,
      REWIND_HOST: "127.0.0.1",
      REWIND_PORT: String(port),
      ...env,
    },
    stdio: ["ignore", "pipe", "inherit"],
    detached: true,
  });
  if (launcher.pid === undefined) throw new Error("the stand-in for npm did not start");
  strays.push(launcher.pid);
  let printed = "";
  launcher.stdout.on("data", (chunk: Buffer) => (printed += chunk.toString()));
  const dev = await waitFor("the stand-in for npm to print the pid of rewind dev", () => {
    const pid = /dev (\d+)/.exec(printed)?.[1];
    return pid === undefined ? undefined : Number(pid);
  });
  strays.push(dev);
  await waitFor(
    `rewind dev to answer GET /readyz on port ${port}`,
    async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.ok === true,
    { timeoutMs: 60_000, intervalMs: 250, shown: () => "" },
  ).catch(async (error: unknown) => {
    throw new Error(`${(error as Error).message}\n${await readFile(log, "utf8").catch(() => "")}`);
  });
  return { launcher: launcher.pid, dev };
}

describe("npm start killed outright", () => {
  it("stops the stack it launched, saying why", async () => {
    const log = path.join(dir, "npm.log");
    const { launcher, dev } = await launch({ npm_lifecycle_event: "start" }, log);
    process.kill(launcher, "SIGKILL");
    await waitFor(`rewind dev (pid ${dev}) to stop once npm (pid ${launcher}) is gone`, () => !isAlive(dev), {
      timeoutMs: 30_000,
      shown: () => "still running",
    });
    const output = await readFile(log, "utf8");
    expect(output).toContain(`the npm process that started this stack (pid ${launcher}) is gone: stopping`);
    expect(output).toMatch(/"stopped"|\bstopped\b/);
  }, 120_000);

  it("leaves a stack launched without npm running when its launcher dies", async () => {
    const log = path.join(dir, "shell.log");
    const { launcher, dev } = await launch({}, log);
    process.kill(launcher, "SIGKILL");
    // Longer than the stack's check interval (1 s), several times over.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect(isAlive(dev), "rewind dev outlived a launcher that was not npm").toBe(true);
    process.kill(dev, "SIGTERM");
    await waitFor(`rewind dev (pid ${dev}) to stop on SIGTERM`, () => !isAlive(dev), { timeoutMs: 30_000 });
    expect(await readFile(log, "utf8")).not.toContain("is gone: stopping");
  }, 120_000);
});
