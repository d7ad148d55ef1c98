/**
 * Request/answer messages between the bench and its child processes (the MCP server and the
 * workers) over Node's IPC channel, so the bench can ask a child what only it can see: when a
 * run's first call arrived, how much memory the worker holds.
 */
import type { ChildProcess } from "node:child_process";

export interface IpcRequest {
  id: number;
  op: string;
  args?: unknown;
}

export type IpcAnswer = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

/** The first message a child sends once it is ready, with whatever it wants the bench to know. */
export interface ReadyMessage {
  ready: true;
  info: Record<string, unknown>;
}

const isRequest = (message: unknown): message is IpcRequest =>
  typeof message === "object" && message !== null && "id" in message && "op" in message;

const isAnswer = (message: unknown): message is IpcAnswer =>
  typeof message === "object" && message !== null && "id" in message && "ok" in message;

/** In a child: answers the bench's requests with these handlers. */
export function serveIpc(handlers: Record<string, (args: unknown) => unknown>): void {
  process.on("message", (message: unknown) => {
    if (!isRequest(message)) return;
    const handler = handlers[message.op];
    void (async () => {
      try {
        if (!handler) throw new Error(`no handler for ${message.op}`);
        process.send?.({ id: message.id, ok: true, value: await handler(message.args) } satisfies IpcAnswer);
      } catch (error) {
        process.send?.({
          id: message.id,
          ok: false,
          error: error instanceof Error ? error.message : String(error),
        } satisfies IpcAnswer);
      }
    })();
  });
}

export function announceReady(info: Record<string, unknown>): void {
  process.send?.({ ready: true, info } satisfies ReadyMessage);
}

export interface IpcClient {
  call<T>(op: string, args?: unknown): Promise<T>;
}

/** In the bench: a client for a forked child's handlers. */
export function ipcClient(child: ChildProcess): IpcClient {
  let next = 1;
  const waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  child.on("message", (message: unknown) => {
    if (!isAnswer(message)) return;
    const waiter = waiting.get(message.id);
    if (!waiter) return;
    waiting.delete(message.id);
    if (message.ok) waiter.resolve(message.value);
    else waiter.reject(new Error(message.error));
  });
  child.once("exit", () => {
    for (const waiter of waiting.values()) waiter.reject(new Error("the child process exited"));
    waiting.clear();
  });
  return {
    call<T>(op: string, args?: unknown): Promise<T> {
      const id = next++;
      return new Promise<T>((resolve, reject) => {
        waiting.set(id, { resolve: (value) => resolve(value as T), reject });
        child.send({ id, op, args } satisfies IpcRequest);
      });
    },
  };
}

/** Waits for a child's ReadyMessage, failing with its output if it exits or takes too long. */
export function waitForReady(
  child: ChildProcess,
  output: () => string,
  timeoutMs: number,
  name: string,
): Promise<ReadyMessage> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not become ready within ${timeoutMs} ms:\n${output()}`)),
      timeoutMs,
    );
    const onMessage = (message: unknown) => {
      if (typeof message === "object" && message !== null && "ready" in message) {
        clearTimeout(timer);
        child.off("message", onMessage);
        resolve(message as ReadyMessage);
      }
    };
    child.on("message", onMessage);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${signal ?? code}) before it was ready:\n${output()}`));
    });
  });
}
