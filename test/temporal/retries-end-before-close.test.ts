/**
 * A connection closed while the SDK's retry of a failed call waits on its backoff timer. With the
 * SDK's own connection the timer's next attempt throws "Channel has been shut down" where nobody
 * can catch it and the process dies (a test run once failed on exactly that); with connectClient's
 * the call fails in its caller and close() returns once the retries are over. Each side runs in a
 * child process, so the crash it expects cannot land in the test runner. The port refuses at once,
 * so a call there spends nearly all its first seconds between attempts: closing 300–1,200 ms in
 * lands in a backoff wait.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { getFreePort } from "../helpers/free-port.ts";
import { REPO_ROOT } from "../helpers/paths.ts";

const CLOSE_AFTER_MS = [300, 700, 1_200];
/** Longer than the SDK's longest backoff (5 s cap, 20% jitter): a timer left behind has fired by then. */
const OBSERVE_MS = 6_500;

/** The child's script: one call per closing delay, each connection closed that long after its call began. */
function script(open: string, port: number, close = "await connection.close();"): string {
  return `
${open}
const outcomes = await Promise.all(${JSON.stringify(CLOSE_AFTER_MS)}.map(async (delay) => {
  const connection = openConnection({ address: "127.0.0.1:${port}" });
  const call = connection.workflowService.getSystemInfo({}).then(() => "answered", (error) => "failed: " + error.message);
  await new Promise((resolve) => setTimeout(resolve, delay));
  ${close}
  return call;
}));
console.log("calls: " + JSON.stringify(outcomes));
setTimeout(() => { console.log("no uncaught error"); process.exit(0); }, ${OBSERVE_MS});
`;
}

async function runChild(source: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(
    process.execPath,
    ["--disable-warning=ExperimentalWarning", "--input-type=module", "-e", source],
    {
      cwd: REPO_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  return { code, output };
}

describe("a connection closed while a retry waits", () => {
  it("with the SDK's own connection: the retry throws from its timer and the process dies", async () => {
    const port = await getFreePort();
    const open = `import { Connection } from "@temporalio/client";\nconst openConnection = (options) => Connection.lazy(options);`;
    const { code, output } = await runChild(script(open, port));
    expect(output).toMatch(/Channel has been shut down/);
    expect(output).not.toMatch(/no uncaught error/);
    expect(code).not.toBe(0);
  }, 30_000);

  it("with connectClient's: every call fails in its caller, close() returns, nothing is thrown later", async () => {
    const port = await getFreePort();
    const open = `import { lazyConnectionWithRetriesEndingBeforeClose as openConnection } from "./src/temporal/index.ts";`;
    const { code, output } = await runChild(script(open, port));
    expect(output).not.toMatch(/Channel has been shut down/);
    const calls = /calls: (.*)/.exec(output)?.[1];
    expect(calls, `the child printed no outcome:\n${output}`).toBeDefined();
    const outcomes = JSON.parse(calls ?? "[]") as string[];
    expect(outcomes).toHaveLength(CLOSE_AFTER_MS.length);
    for (const outcome of outcomes) expect(outcome).toMatch(/^failed: .*(UNAVAILABLE|ECONNREFUSED|closed|CANCELLED)/i);
    expect(output).toMatch(/no uncaught error/);
    expect(code).toBe(0);
  }, 30_000);

  it("with connectClient's guard alone (close not waiting for the backoffs): the retries still never reach the shut channel", async () => {
    const port = await getFreePort();
    const open = `import { Connection } from "@temporalio/client";
import { lazyConnectionWithRetriesEndingBeforeClose as openConnection } from "./src/temporal/index.ts";`;
    // The SDK's own close, right away: only the guard stands between a waiting retry and the channel.
    const close = "connection.retryTimers.channelClosing = true; await Connection.prototype.close.call(connection);";
    const { code, output } = await runChild(script(open, port, close));
    expect(output).not.toMatch(/Channel has been shut down/);
    const outcomes = JSON.parse(/calls: (.*)/.exec(output)?.[1] ?? "[]") as string[];
    expect(outcomes, output).toHaveLength(CLOSE_AFTER_MS.length);
    for (const outcome of outcomes) expect(outcome).toMatch(/^failed: .*(UNAVAILABLE|ECONNREFUSED|closed|CANCELLED)/i);
    expect(output).toMatch(/no uncaught error/);
    expect(code).toBe(0);
  }, 30_000);
});
