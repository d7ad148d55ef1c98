/**
 * Turns one journaled call into its outcome. Built-ins the workflow serves itself (durable
 * timers, signals); tool calls are scheduled as activities by the dispatchers added per tool
 * kind. Whatever happens, a call ends as an outcome for the script, never as a workflow error,
 * except cancellation of the run, which propagates.
 */
import { isCancellation, proxyLocalActivities, sleep } from "@temporalio/workflow";
import type { Activities } from "../../activities/index.ts";
import type { JournalEntry, RunInput, ToolErrorData } from "../../shared/index.ts";
import { HTTP_TOOL } from "../../shared/index.ts";
import { dispatchWorkflowCall, type ChildRuns } from "./child-runs.ts";
import type { CallOutcome } from "./call-outcome.ts";
import { dispatchHost } from "./host-dispatch.ts";
import { dispatchHttp } from "./http-dispatch.ts";
import { dispatchMcp, splitTool, type McpDispatchContext } from "./mcp-dispatch.ts";
import type { SignalInbox } from "./signal-inbox.ts";

export type { CallOutcome };

export interface DispatchContext extends McpDispatchContext {
  inbox: SignalInbox;
  run: RunInput;
  children: ChildRuns;
}

/** Built-ins are served by the workflow itself and are not subject to tool-call limits. */
export function isBuiltin(tool: string): boolean {
  return tool.startsWith("rewind.");
}

const { mintWebhookUrl } = proxyLocalActivities<Activities>({ startToCloseTimeout: "10 seconds" });

const failure = (entry: JournalEntry, code: ToolErrorData["code"], message: string): CallOutcome => ({
  ok: false,
  error: { code, message, tool: entry.tool, seq: entry.seq },
});

async function dispatchBuiltin(entry: JournalEntry, context: DispatchContext): Promise<CallOutcome> {
  const args = entry.args as Record<string, unknown>;
  switch (entry.tool) {
    // Deadlines count from when the call was issued, so a call carried over by continue-as-new
    // waits only for what is left.
    case "rewind.sleep":
      await sleep(Math.max(0, entry.issuedAt + Number(args["ms"]) - Date.now()));
      return { ok: true, value: null };
    case "rewind.waitForSignal": {
      const timeoutMs =
        typeof args["timeoutMs"] === "number" ? Math.max(0, entry.issuedAt + args["timeoutMs"] - Date.now()) : null;
      const taken = await context.inbox.take(String(args["name"]), timeoutMs);
      return "payload" in taken
        ? { ok: true, value: taken.payload ?? null }
        : failure(
            entry,
            "timedOut",
            `no signal "${String(args["name"])}" arrived within ${String(args["timeoutMs"])} ms`,
          );
    }
    case "rewind.workflows.start":
    case "rewind.workflows.result":
    case "rewind.workflows.signal":
      return dispatchWorkflowCall(entry, { run: context.run, inbox: context.inbox, children: context.children });
    case "rewind.webhook":
      return { ok: true, value: await mintWebhookUrl({ runId: context.runId, name: String(args["name"]) }) };
    default:
      return failure(entry, "unknownTool", `${entry.tool} is not available in this version of Rewind`);
  }
}

export async function dispatchCall(entry: JournalEntry, context: DispatchContext): Promise<CallOutcome> {
  try {
    if (isBuiltin(entry.tool)) return await dispatchBuiltin(entry, context);
    if (entry.tool === HTTP_TOOL) return await dispatchHttp(entry, context.runId, context.toolset, context.trace);
    const { group } = splitTool(entry.tool);
    if (context.toolset.mcpServers[group]) return await dispatchMcp(entry, context);
    if (context.toolset.hostTools[group]) return await dispatchHost(entry, context.toolset, context.trace);
    return failure(entry, "unknownTool", `${entry.tool} can't be dispatched by this version of Rewind`);
  } catch (error) {
    if (isCancellation(error)) throw error;
    return failure(entry, "toolFailed", error instanceof Error ? error.message : String(error));
  }
}
