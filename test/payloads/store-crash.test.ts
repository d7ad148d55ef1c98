/**
 * A worker killed between storing a large result and completing its activity: the stored
 * payload has no reference in history (nothing dangles), the call is retried by another worker
 * with the same idempotency key, and the run completes with the result intact.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  isReferencePayload,
  decodeReferencePayload,
} from "@temporalio/common/lib/internal-non-workflow/extstore-helpers.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { IDEMPOTENCY_KEY } from "../helpers/mcp-test-tools.ts";
import { REPO_ROOT } from "../helpers/paths.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { TEST_SECRET_KEY } from "../helpers/secret-key.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { spawnWorker } from "../helpers/worker-process.ts";

let stack: RewindStack;
let server: TestMcpServer;
let payloadDir: string;
const BIG = "0123456789abcdef".repeat(80_000);

beforeAll(async () => {
  payloadDir = await mkdtemp(path.join(tmpdir(), "rewind-store-crash-"));
  stack = await startRewindStack({ noWorker: true, env: { REWIND_PAYLOAD_STORE: `file:${payloadDir}` } });
  server = await startMcpServer({
    tools: [
      {
        name: "big",
        inputSchema: { type: "object" },
        handler: async () => ({ content: [{ type: "text", text: BIG }] }),
      },
    ],
  });
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
  await rm(payloadDir, { recursive: true, force: true });
});

function workerEnv(): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: stack.address,
    REWIND_TASK_QUEUE: stack.config.temporal.taskQueue,
    REWIND_STATE_DIR: stack.config.stateDir,
    REWIND_PAYLOAD_STORE: `file:${payloadDir}`,
    REWIND_SECRET_KEY: TEST_SECRET_KEY.toString("base64"),
  };
}

/** Runs the dying worker until it has stored one payload and killed itself. */
async function dieAfterStoring(): Promise<string> {
  const child = spawn(
    process.execPath,
    [
      "--no-node-snapshot",
      "--disable-warning=ExperimentalWarning",
      path.join(REPO_ROOT, "test/fixtures/dies-after-storing-worker.ts"),
    ],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, ...workerEnv() },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
    child.once("exit", (_code, sig) => resolve(sig)),
  );
  expect(signal, output).toBe("SIGKILL");
  const stored = /stored ([0-9a-f]{64})/.exec(output)?.[1];
  expect(stored, output).toBeDefined();
  return stored ?? "";
}

describe("a worker killed after storing a payload", () => {
  it("leaves no dangling reference and loses no result", async () => {
    const toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
    const id = await startRun(stack, {
      toolset,
      script:
        'import { svc } from "rewind:tools";\nexport default async () => { const t = (await svc.big({})) as unknown as string; return { length: t.length, head: t.slice(0, 16) }; };',
    });
    const orphan = await dieAfterStoring();
    // The run is still going: the call's result never reached Temporal.
    expect((await stack.client.workflow.getHandle(id).describe()).status.name).toBe("RUNNING");
    const history = await stack.client.workflow.getHandle(id).fetchHistory();
    expect((history.events ?? []).some((e) => e.activityTaskCompletedEventAttributes)).toBe(false);

    const worker = await spawnWorker(workerEnv());
    try {
      const done = await waitForRun(stack, id, 90_000);
      expect(done.status, JSON.stringify(done.error)).toBe("completed");
      expect(done.result).toEqual({ length: BIG.length, head: BIG.slice(0, 16) });
    } finally {
      await worker.kill();
    }
    // Every reference in history names a stored payload. The dead attempt's payload stays behind
    // unreferenced (its result said attempt 1, the retry's attempt 2): pruning removes such files.
    const after = await stack.client.workflow.getHandle(id).fetchHistory();
    const references = (after.events ?? [])
      .flatMap((e) => e.activityTaskCompletedEventAttributes?.result?.payloads ?? [])
      .filter(isReferencePayload);
    expect(references).toHaveLength(1);
    const stored = new Set((await readdir(payloadDir, { recursive: true })).map((f) => path.basename(String(f))));
    for (const reference of references)
      expect(stored.has(decodeReferencePayload(reference).claimData["sha256"] ?? "")).toBe(true);
    expect(stored.has(orphan)).toBe(true);
    // The call was sent twice (the first attempt's result was lost with its worker), with one key.
    const keys = server.calls.filter((c) => c.name === "big").map((c) => c.meta[IDEMPOTENCY_KEY]);
    expect(keys).toEqual([`${id}/1`, `${id}/1`]);
  }, 150_000);
});
