/**
 * Which tool call a server-to-client request belongs to. A run's calls share one MCP session,
 * and a server may ask the client something (elicitation) in the middle of one of them: on that
 * call's own response stream — then the request arrives in the call's async context, which
 * `callScope` carries — or on the session's standalone stream, which names no call. Then the
 * request goes to the only call in flight, or to the one in flight longest (the MCP spec gives a
 * client nothing better to go on).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { McpCallHooks } from "./mcp-types.ts";

export interface CallSlot {
  hooks: McpCallHooks;
  startedAt: number;
}

export const callScope = new AsyncLocalStorage<CallSlot>();

export class CallSlots {
  private readonly inFlight = new Set<CallSlot>();

  /** Runs `send` as the call `hooks` belong to; server requests it causes find them. */
  async run<T>(hooks: McpCallHooks | undefined, send: () => Promise<T>): Promise<T> {
    const slot: CallSlot = { hooks: hooks ?? {}, startedAt: Date.now() };
    this.inFlight.add(slot);
    try {
      return await callScope.run(slot, send);
    } finally {
      this.inFlight.delete(slot);
    }
  }

  /** The call a server request arriving now belongs to, among those that can take it. */
  current(accepts: (hooks: McpCallHooks) => boolean): CallSlot | undefined {
    const own = callScope.getStore();
    if (own && this.inFlight.has(own)) return accepts(own.hooks) ? own : undefined;
    let oldest: CallSlot | undefined;
    for (const slot of this.inFlight)
      if (accepts(slot.hooks) && (!oldest || slot.startedAt < oldest.startedAt)) oldest = slot;
    return oldest;
  }
}
