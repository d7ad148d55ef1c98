/**
 * A worker started through a launch chain (`bin/rewind.js worker`, `npx rewind worker`) drains
 * and leaves no process behind whichever process of the chain is signalled: SIGTERM to the
 * wrapper, SIGTERM to the worker itself, SIGKILL to the wrapper (the worker learns it through the
 * wrapper's IPC channel: src/cli/stop-signals.ts), SIGTERM or SIGKILL to npm's own process (the
 * wrapper watches it: bin/rewind.js). Liveness is read from /proc: a zombie counts as gone.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { watchOutput, type ChildOutput } from "../helpers/child-output.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { TEST_SECRET_KEY } from "../helpers/secret-key.ts";
import { waitFor } from "../helpers/wait-for.ts";

interface Chain {
  /** The processes from the one the test started down to the worker: [wrapper, worker] or [npm, sh, wrapper, worker]. */
  pids: number[];
  output: ChildOutput;
  root: ChildProcess;
}

const started: Chain[] = [];

/** `pid`'s state letter and parent, from /proc; undefined once it is gone. */
function stat(pid: number): { state: string; ppid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const [state = "", ppid = "0"] = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state, ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}
const alive = (pid: number) => {
  const s = stat(pid);
  return s !== undefined && s.state !== "Z" && s.state !== "X";
};
function childOf(pid: number): number | undefined {
  for (const entry of readdirSync("/proc")) {
    const child = Number(entry);
    if (Number.isInteger(child) && alive(child) && stat(child)?.ppid === pid) return child;
  }
  return undefined;
}

const isWorker = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("src/cli/main.ts\0worker");
  } catch {
    return false;
  }
};

async function startChain(command: string, args: string[]): Promise<Chain> {
  const root = spawn(command, args, {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: inject("temporalAddress"),
      REWIND_SECRET_KEY: TEST_SECRET_KEY.toString("base64"),
      REWIND_STATE_DIR: path.join(REPO_ROOT, ".rewind"),
      REWIND_TASK_QUEUE: `stop-chain-${randomUUID()}`,
      REWIND_PUBLIC_URL: "http://127.0.0.1:1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = watchOutput(root, { name: `${command} ${args.join(" ")}` });
  const chain: Chain = { pids: [root.pid ?? 0], output, root };
  started.push(chain);
  await output.waitFor(/worker started/, 60_000);
  // Down the chain to the worker (npx puts a shell between npm and the wrapper).
  for (let level = 1; !isWorker(chain.pids.at(-1) ?? 0); level++) {
    const above = chain.pids.at(-1) ?? 0;
    if (level > 4) throw new Error(`no worker among the descendants of ${command}: ${chain.pids.join(" → ")}`);
    chain.pids.push(
      await waitFor(`the child of process ${above} (level ${level} of ${command})`, () => childOf(above)),
    );
  }
  return chain;
}

async function expectAllGone(chain: Chain): Promise<void> {
  await waitFor(`every process of the chain ${chain.pids.join(" → ")} to be gone`, () => chain.pids.filter(alive), {
    until: (living) => living.length === 0,
    timeoutMs: 30_000,
  });
  await chain.output.waitFor(/worker drained and stopped/, 5_000);
}

/**
 * The process's exit code, once Node has reaped it: /proc may show it gone (a zombie counts as
 * gone) before the ChildProcess has seen its exit.
 */
async function exitCodeOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const [code] = (await once(child, "exit")) as [number | null];
  return code;
}

afterEach(() => {
  for (const chain of started.splice(0)) for (const pid of chain.pids) if (alive(pid)) process.kill(pid, "SIGKILL");
});

const BIN = path.join(REPO_ROOT, "bin/rewind.js");

describe("bin/rewind.js worker", () => {
  it("SIGTERM to the wrapper: the worker drains, both end, the wrapper with the worker's code", async () => {
    const chain = await startChain(process.execPath, [BIN, "worker"]);
    const exited = new Promise((resolve) => chain.root.once("exit", (code, signal) => resolve({ code, signal })));
    process.kill(chain.pids[0] ?? 0, "SIGTERM");
    await expectAllGone(chain);
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(chain.output.text()).toContain("received SIGTERM: draining the worker");
  });

  it("SIGTERM to the worker itself: it drains, and the wrapper ends with it", async () => {
    const chain = await startChain(process.execPath, [BIN, "worker"]);
    process.kill(chain.pids[1] ?? 0, "SIGTERM");
    await expectAllGone(chain);
    expect(await exitCodeOf(chain.root)).toBe(0);
  });

  it("SIGKILL to the wrapper: the worker is not left behind, it drains", async () => {
    const chain = await startChain(process.execPath, [BIN, "worker"]);
    process.kill(chain.pids[0] ?? 0, "SIGKILL");
    await expectAllGone(chain);
    expect(chain.output.text()).toContain("received SIGTERM: draining the worker");
  });
});

describe("npx rewind worker", () => {
  it("SIGTERM to npm: passed down the chain, the worker drains", async () => {
    const chain = await startChain("npx", ["--yes", "rewind", "worker"]);
    process.kill(chain.pids[0] ?? 0, "SIGTERM");
    await expectAllGone(chain);
  });

  it("SIGKILL to npm: the wrapper sees it and stops the worker, which drains", async () => {
    const chain = await startChain("npx", ["--yes", "rewind", "worker"]);
    process.kill(chain.pids[0] ?? 0, "SIGKILL");
    await expectAllGone(chain);
  });
});
