/**
 * A write that wakes more parked runs than Temporal lets a workflow have signals pending (2,000
 * by default) still answers: the credentials workflow signals them 500 at a time. Sent at once,
 * the workflow task carrying the signals would be refused by the server and retried for good, and
 * the write would never be answered. The waits here name runs that do not exist (their signals
 * fail at once), which is all the limit needs: the signals are pending until the server answers.
 */
import { randomUUID } from "node:crypto";
import type { temporal } from "@temporalio/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSecretBox } from "../../src/credentials/index.ts";
import { credentialsWorkflowId, type CredentialsWait } from "../../src/shared/index.ts";
import { awaitCredentialsSignal, getCredentialsQuery, setCredentialsUpdate } from "../../src/workflows/messages.ts";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, TEST_SECRET_KEY, type RewindStack } from "../helpers/rewind-stack.ts";
import { waitFor } from "../helpers/wait-for.ts";

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const key = `batches-key-${randomUUID()}`;
const namespace = `batches-${randomUUID().slice(0, 8)}`;
const auth = { authorization: `Bearer ${key}` };
/** More than Temporal's default limit of pending signals per workflow (2,000). */
const WAITS = 2_100;
let stack: RewindStack;
let server: TestMcpServer;

beforeAll(async () => {
  stack = await startRewindStack({ env: { REWIND_API_KEYS: `${key}:${namespace}` } });
  server = await startMcpServer({ tools: [echoTool("whoami")] });
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

/** Every event of a workflow from `runId` on, following continue-as-new (these waits fill a history past the suggestion). */
async function historyAcrossRuns(workflowId: string, runId: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  for (let next: string | undefined = runId; next;) {
    const own: HistoryEvent[] = (await stack.client.workflow.getHandle(workflowId, next).fetchHistory()).events ?? [];
    events.push(...own);
    next = own.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return events;
}

describe("a write that wakes thousands of parked runs", () => {
  it("signals them in batches the server accepts, and answers", { timeout: 240_000 }, async () => {
    const registered = await stack.request("POST", "/v1/toolsets", { mcpServers: { svc: { url: server.url } } }, auth);
    expect([200, 201], JSON.stringify(registered.body)).toContain(registered.status);
    const toolsetId = String(registered.body.id);
    const bearer = (token: string) => ({ mcpServers: { svc: { headers: { authorization: token } } } });
    const first = await stack.request("PUT", `/v1/toolsets/${toolsetId}/credentials`, bearer("Bearer one"), auth);
    expect(first.status, JSON.stringify(first.body)).toBe(200);

    const handle = stack.client.workflow.getHandle(credentialsWorkflowId(namespace, toolsetId));
    const { revision } = await handle.query(getCredentialsQuery);
    const firstRunId = (await handle.describe()).runId;
    const ghosts = Array.from({ length: WAITS }, (_, i) => `run_ghost_${i}_${randomUUID().slice(0, 8)}`);
    for (let at = 0; at < ghosts.length; at += 100) {
      await Promise.all(
        ghosts.slice(at, at + 100).map((runId) => {
          const wait: CredentialsWait = { runId, scope: "toolset", seen: revision };
          return handle.signal(awaitCredentialsSignal, wait);
        }),
      );
    }
    // Every wait is registered (the signals handled) before the write, so the write must wake them all.
    await waitFor("the waits to be handled", async () => (await handle.describe()).raw.pendingWorkflowTask, {
      timeoutMs: 60_000,
      until: (pending) => !pending,
    });

    const sealed = createSecretBox(TEST_SECRET_KEY).seal(JSON.stringify(bearer("Bearer two")));
    const answered = await Promise.race([
      handle.executeUpdate(setCredentialsUpdate, { args: [{ sealed }] }),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error("the write was not answered within 120 s")), 120_000),
      ),
    ]);
    expect(answered.revision).toBe(revision + 1);
    // None of the ghosts exists, so none was woken; each was signalled once and dropped.
    expect(answered.woken ?? []).toEqual([]);

    const history = await historyAcrossRuns(handle.workflowId, firstRunId);
    const initiated = history.filter((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes);
    expect(initiated).toHaveLength(WAITS);
    // No workflow task asked for more than 500 of them.
    let inTask = 0;
    let most = 0;
    for (const event of history) {
      if (event.workflowTaskCompletedEventAttributes) inTask = 0;
      else if (event.signalExternalWorkflowExecutionInitiatedEventAttributes) most = Math.max(most, ++inTask);
    }
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(500);
    // A second write finds no wait left.
    const again = await handle.executeUpdate(setCredentialsUpdate, { args: [{ sealed }] });
    expect(again.woken).toBeUndefined();
  });
});
