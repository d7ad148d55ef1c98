/**
 * Long runs: a run of 1,000 calls (each journaled with some 700 bytes of arguments and result)
 * continues as new several times, and the input each execution starts with stays small in
 * history whatever the journal holds (journals past the payload threshold are kept in the payload
 * store; history holds a reference), as does every event. Fewer, larger calls than it once made
 * (2,000 small ones) reach the same lengths of journal and history in a third of the time.
 */
import { isReferencePayload } from "@temporalio/common/lib/internal-non-workflow/extstore-helpers.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";

let stack: RewindStack;
let server: TestMcpServer;

beforeAll(async () => {
  stack = await startRewindStack({ env: { REWIND_CONTINUE_AS_NEW_EVENTS: "1000" } });
  server = await startMcpServer({ tools: [echoTool("echo")] });
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

/** Bytes of each execution's start input as history holds it, oldest first. */
async function startInputs(id: string): Promise<{ bytes: number; reference: boolean }[]> {
  const runIds: string[] = [];
  for await (const info of stack.client.workflow.list({ query: `WorkflowId = '${id}'` })) runIds.push(info.runId);
  const sizes: { bytes: number; reference: boolean }[] = [];
  for (const runId of runIds.reverse()) {
    const history = await stack.client.workflow.getHandle(id, runId).fetchHistory();
    const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    if (!payload) throw new Error(`execution ${runId} has no input`);
    sizes.push({
      bytes: (payload.data?.length ?? 0) + JSON.stringify(payload.metadata ?? {}).length,
      reference: isReferencePayload(payload),
    });
    const largest = Math.max(...(history.events ?? []).map((e) => JSON.stringify(e).length));
    expect(largest, `largest event of ${runId}`).toBeLessThan(300 * 1024);
  }
  return sizes;
}

describe("long runs", () => {
  it("runs 1,000 calls across executions with a small carried input at every length", async () => {
    const toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
    const id = await startRun(stack, {
      toolset,
      script: `import { svc } from "rewind:tools";
const PADDING = "-".repeat(300);
export default async function main() {
  let calls = 0;
  for (let round = 0; round < 4; round++) {
    const answers = await Promise.all(Array.from({ length: 250 }, (_, i) => svc.echo({ message: round + ":" + i + PADDING })));
    calls += answers.length;
  }
  return calls;
}`,
    });
    const done = await waitForRun(stack, id, 600_000);
    expect(done.status, JSON.stringify(done.error)).toBe("completed");
    expect(done.result).toBe(1_000);
    const inputs = await startInputs(id);
    expect(inputs.length).toBeGreaterThan(2);
    // The first execution starts with the script; the later ones with the journal so far, which
    // past 256 KiB is a reference of a few hundred bytes. Either way, never more than the threshold.
    for (const input of inputs) expect(input.bytes).toBeLessThanOrEqual(256 * 1024 + 1024);
    expect(inputs.at(-1)?.reference).toBe(true);
    console.log(
      `carried inputs in history (bytes): ${inputs.map((i) => `${i.bytes}${i.reference ? " (reference)" : ""}`).join(", ")}`,
    );
  }, 660_000);
});
