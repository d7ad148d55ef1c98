/**
 * What a run started from (its script, toolset and input), and the tools its journal shows it
 * called. The start is the first event of the run's current execution: continue-as-new hands each
 * execution the same script and toolset, so the newest one answers for the whole run, running or
 * closed. The calls come from the run's journal query, a page at a time, so a long run's journal
 * never has to fit in one answer.
 */
import type { Client } from "@temporalio/client";
import { fromHistoryPayload } from "../payloads/index.ts";
import type { RunInput } from "../shared/index.ts";
import { journalPages } from "./worker-query.ts";

/** A tool a run called, and for the `workflows` built-in the workflow it named. */
export interface CalledTool {
  tool: string;
  workflow?: string;
}

/** The run's start input, or undefined when its first event carries none. */
export async function readRunStart(
  client: Client,
  workflowId: string,
  executionRunId: string,
): Promise<RunInput | undefined> {
  const history = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId, runId: executionRunId },
    maximumPageSize: 1,
  });
  const payload = history.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  return payload ? fromHistoryPayload<RunInput>(client.options.loadedDataConverter, payload) : undefined;
}

/** Every distinct tool in the run's journal (answered by a worker, from the run's state). */
export async function readCalledTools(client: Client, workflowId: string): Promise<CalledTool[]> {
  const called = new Map<string, CalledTool>();
  for await (const page of journalPages(client, workflowId)) {
    for (const entry of page.entries) {
      const workflow = workflowNamed(entry.args);
      const tool =
        entry.tool.startsWith("rewind.workflows.") && workflow !== undefined
          ? { tool: entry.tool, workflow }
          : { tool: entry.tool };
      called.set(JSON.stringify(tool), tool);
    }
  }
  return [...called.values()];
}

function workflowNamed(args: unknown): string | undefined {
  if (typeof args !== "object" || args === null || !("workflow" in args)) return undefined;
  return typeof args.workflow === "string" ? args.workflow : undefined;
}
