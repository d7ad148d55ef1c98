/**
 * The baseline Rewind is compared with: a plain Temporal workflow that makes the same N `echo`
 * calls as the bench's scripts, one plain activity per call, sequentially or in 16 lanes (the
 * same shape as the parallel script), or the same shape with no-op activities (Temporal's floor);
 * and N sequential `blob` calls through the same activity, for the large-results scenario.
 * Registered on its own worker with its own workflowsPath.
 */
import { proxyActivities, workflowInfo } from "@temporalio/workflow";
import type { PlainActivities } from "./activities.ts";

const { plainCallTool, plainNoop } = proxyActivities<PlainActivities>({
  startToCloseTimeout: "5 minutes",
  retry: { maximumAttempts: 5, initialInterval: "500ms", backoffCoefficient: 2, maximumInterval: "20s" },
});

export interface PlainCallsInput {
  url: string;
  n: number;
  /** 1: sequential; 16: sixteen lanes, each sequential. */
  width: number;
  /** Call the no-op activity instead of the MCP server (Temporal's floor). */
  noop?: boolean;
}

export async function plainCalls(input: PlainCallsInput): Promise<number> {
  const id = workflowInfo().workflowId;
  let total = 0;
  const lane = async (first: number): Promise<void> => {
    for (let i = first; i < input.n; i += input.width) {
      const call = input.noop ? plainNoop : plainCallTool;
      const result = (await call({ url: input.url, tool: "echo", args: { i }, key: `${id}/${i + 1}` })) as {
        i: number;
      };
      total += result.i;
    }
  };
  await Promise.all(Array.from({ length: Math.min(input.width, input.n) }, (_, first) => lane(first)));
  return total;
}

export interface PlainBlobsInput {
  url: string;
  n: number;
  /** Bytes of text each call answers. */
  bytes: number;
}

/** N sequential `blob` calls, each with its own seed; answers the total length received. */
export async function plainBlobs(input: PlainBlobsInput): Promise<number> {
  const id = workflowInfo().workflowId;
  let total = 0;
  for (let i = 0; i < input.n; i++) {
    const key = `${id}/${i + 1}`;
    const text = (await plainCallTool({
      url: input.url,
      tool: "blob",
      args: { bytes: input.bytes, seed: key },
      key,
    })) as string;
    total += text.length;
  }
  return total;
}
