/**
 * Turns one journaled call into its outcome. Built-ins the workflow serves itself (durable
 * timers, signals); tool calls are scheduled as activities by the dispatchers added per tool
 * kind. Whatever happens, a call ends as an outcome for the script, never as a workflow error,
 * except cancellation of the run, which propagates.
 */
import { isCancellation, sleep } from "@temporalio/workflow";
import type { JournalEntry } from "../shared/journal.ts";
import type { ToolErrorData } from "../shared/tool-error.ts";
import type { SignalInbox } from "./signal-inbox.ts";

export type CallOutcome = { ok: true; value: unknown } | { ok: false; error: ToolErrorData };

export interface DispatchContext {
  inbox: SignalInbox;
}

const failure = (entry: JournalEntry, code: ToolErrorData["code"], message: string): CallOutcome => ({
  ok: false,
  error: { code, message, tool: entry.tool, seq: entry.seq },
});

async function dispatchBuiltin(entry: JournalEntry, context: DispatchContext): Promise<CallOutcome> {
  const args = entry.args as Record<string, unknown>;
  switch (entry.tool) {
    case "rewind.sleep":
      await sleep(Number(args["ms"]));
      return { ok: true, value: null };
    case "rewind.waitForSignal": {
      const timeoutMs = typeof args["timeoutMs"] === "number" ? args["timeoutMs"] : null;
      const taken = await context.inbox.take(String(args["name"]), timeoutMs);
      return "payload" in taken
        ? { ok: true, value: taken.payload ?? null }
        : failure(entry, "timedOut", `no signal "${String(args["name"])}" arrived within ${timeoutMs} ms`);
    }
    default:
      return failure(entry, "unknownTool", `${entry.tool} is not available in this version of Rewind`);
  }
}

export async function dispatchCall(entry: JournalEntry, context: DispatchContext): Promise<CallOutcome> {
  try {
    if (entry.tool.startsWith("rewind.")) return await dispatchBuiltin(entry, context);
    return failure(entry, "unknownTool", `no dispatcher for ${entry.tool}`);
  } catch (error) {
    if (isCancellation(error)) throw error;
    return failure(entry, "toolFailed", error instanceof Error ? error.message : String(error));
  }
}
