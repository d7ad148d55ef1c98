/**
 * The three ways the bench makes the same N `echo` calls — a Rewind run started through the API,
 * a plain Temporal workflow, and the MCP client directly — each timed from the caller's side,
 * sequentially or in 16 lanes. The Rewind scripts are what a model would write.
 */
import { randomUUID } from "node:crypto";
import type { BenchStack } from "./stack.ts";
import { since } from "./stats.ts";

/** A script making `n` sequential calls, or `width` lanes of sequential calls. */
export function callsScript(): string {
  return `import { svc } from "rewind:tools";

export default async function main(input: { n: number; width: number }) {
  let total = 0;
  const lane = async (first: number) => {
    for (let i = first; i < input.n; i += input.width) {
      const { i: echoed } = await svc.echo({ i });
      total += echoed;
    }
  };
  await Promise.all(Array.from({ length: Math.min(input.width, input.n) }, (_, first) => lane(first)));
  return total;
}
`;
}

export const expectedTotal = (n: number): number => (n * (n - 1)) / 2;

export interface RunTiming {
  id: string;
  /** POST /v1/runs until the run completed. */
  ms: number;
  /** POST /v1/runs until its answer. */
  postMs: number;
  /** Epoch ms just before the POST was sent. */
  sentAt: number;
  result: unknown;
}

/** Starts a run through the API; does not wait for it. */
export async function postRun(
  stack: BenchStack,
  script: string,
  input: unknown,
  toolset = stack.toolsetId,
  apiUrl = stack.api.url,
): Promise<{ id: string; postMs: number; sentAt: number; started: number }> {
  const started = performance.now();
  const sentAt = performance.timeOrigin + started;
  const response = await fetch(`${apiUrl}/v1/runs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ script, toolset, input }),
  });
  const body = (await response.json()) as { id?: string; error?: unknown };
  if (response.status !== 201 || !body.id)
    throw new Error(`POST /v1/runs answered ${response.status}: ${JSON.stringify(body)}`);
  return { id: body.id, postMs: since(started), sentAt, started };
}

/** Starts a run through the API and waits for its result (Temporal's long poll, not API polling). */
export async function rewindRun(
  stack: BenchStack,
  script: string,
  input: unknown,
  toolset = stack.toolsetId,
): Promise<RunTiming> {
  const posted = await postRun(stack, script, input, toolset);
  const result = await stack.client.workflow.getHandle(posted.id).result();
  return { id: posted.id, ms: since(posted.started), postMs: posted.postMs, sentAt: posted.sentAt, result };
}

/** The same calls as a plain Temporal workflow with one plain activity per call. */
export async function plainRun(
  stack: BenchStack,
  n: number,
  width: number,
  noop = false,
): Promise<{ id: string; ms: number; result: unknown; sentAt: number }> {
  const started = performance.now();
  const sentAt = performance.timeOrigin + started;
  const id = `plain_${randomUUID()}`;
  const handle = await stack.plainClient.workflow.start("plainCalls", {
    taskQueue: stack.plainTaskQueue,
    workflowId: id,
    args: [{ url: stack.mcpUrl, n, width, noop }],
  });
  const result = await handle.result();
  return { id, ms: since(started), result, sentAt };
}

/** The same calls made directly with the MCP client pool. */
export async function directCalls(
  stack: BenchStack,
  n: number,
  width: number,
): Promise<{ ms: number; result: number }> {
  const started = performance.now();
  const prefix = `direct_${randomUUID()}`;
  let total = 0;
  const lane = async (first: number) => {
    for (let i = first; i < n; i += width) {
      const outcome = await stack.directPool.callTool({
        url: stack.mcpUrl,
        poolKey: stack.mcpUrl,
        name: "echo",
        arguments: { i },
        meta: { "codes.rewind/idempotency-key": `${prefix}/${i + 1}` },
        timeoutMs: 60_000,
      });
      total += (outcome.structuredContent as { i: number }).i;
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, n) }, (_, first) => lane(first)));
  return { ms: since(started), result: total };
}

export function assertTotal(what: string, result: unknown, n: number): void {
  if (result !== expectedTotal(n))
    throw new Error(`${what} returned ${JSON.stringify(result)}, expected ${expectedTotal(n)}`);
}
