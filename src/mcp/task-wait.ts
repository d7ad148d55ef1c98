/**
 * Waits for an MCP task (a tool called with task augmentation) to end, the way a durable caller
 * must: the task's id and session are handed out as soon as the server created it, so an attempt
 * that comes after a worker died polls the same task instead of calling the tool again; status is
 * polled with backoff (the server's `pollInterval` when it gives one); a task that asks for input
 * or has ended is read with `tasks/result`, which also carries the server's questions; and a
 * caller that gives up (cancellation) cancels the task on the server.
 */
import type { McpConnection, McpTaskState } from "./mcp-client.ts";
import { McpCallError } from "./mcp-errors.ts";
import type { McpCallHooks, McpCallOutcome } from "./mcp-types.ts";

const FIRST_POLL_MS = 250;
const MAX_POLL_MS = 5_000;
/** Bound of telling the server to cancel, once the caller has given up. */
const CANCEL_WAIT_MS = 2_000;

export interface TaskWait {
  connection: McpConnection;
  taskId: string;
  /** What the server said when it created the task, if this attempt created it. */
  created?: McpTaskState;
  /** Epoch ms by which the call must have its result. */
  endsAt: number;
  boundMs: number;
  signal?: AbortSignal | undefined;
  hooks?: McpCallHooks | undefined;
  where: string;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

export async function waitForTask(wait: TaskWait): Promise<McpCallOutcome> {
  const { connection, taskId, hooks, signal } = wait;
  const left = () => Math.max(1, wait.endsAt - Date.now());
  const options = () => ({ timeoutMs: left(), boundMs: wait.boundMs, signal, hooks });
  let state = wait.created;
  let delay = FIRST_POLL_MS;
  try {
    for (;;) {
      if (state && state.status !== "working") break;
      if (state) {
        await sleep(Math.min(left(), state.pollInterval ?? delay), signal);
        delay = Math.min(MAX_POLL_MS, delay * 2);
      }
      state = await connection.getTask(taskId, options());
    }
    if (state.status === "cancelled") {
      return {
        kind: "result",
        isError: true,
        content: [
          {
            type: "text",
            text: `the server cancelled task ${taskId}${state.statusMessage ? `: ${state.statusMessage}` : ""}`,
          },
        ],
      };
    }
    // completed, failed and input_required: tasks/result answers (and asks) what is left.
    return await connection.taskResult(taskId, options());
  } catch (error) {
    if (error instanceof McpCallError && error.reason === "cancelled") {
      await connection.cancelTask(taskId, { timeoutMs: CANCEL_WAIT_MS }).catch(() => undefined);
    }
    throw error;
  }
}
