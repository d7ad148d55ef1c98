/**
 * A finished MCP request leaves nothing behind. Each call's signal used to be made with
 * `AbortSignal.any`, which Node keeps alive while it has an `abort` listener — and the SDK and
 * undici add one to every request and never remove it — so every call's hooks (and through them
 * its activity) stayed in memory for the life of the worker: 2,000 sleeping runs held 2,000
 * activities. Here a session makes calls whose hooks are watched with WeakRefs, then GC runs.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { createMcpPool, resultValue, type McpCallHooks } from "../../src/mcp/index.ts";
import { linkSignals } from "../../src/mcp/linked-signal.ts";
import { startMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

describe("linkSignals", () => {
  it("aborts with the reason of the first source to abort, once", () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = linkSignals([a.signal, b.signal]);
    b.abort(new Error("b went first"));
    a.abort(new Error("a went second"));
    expect(linked.signal.aborted).toBe(true);
    expect((linked.signal.reason as Error).message).toBe("b went first");
  });

  it("is aborted at once when a source already was", () => {
    const a = new AbortController();
    a.abort("gone");
    expect(linkSignals([new AbortController().signal, a.signal]).signal.reason).toBe("gone");
  });

  it("no longer follows its sources once unlinked", () => {
    const a = new AbortController();
    const linked = linkSignals([a.signal]);
    linked.unlink();
    a.abort();
    expect(linked.signal.aborted).toBe(false);
  });
});

describe("a finished call", () => {
  it("is garbage once answered, though its session lives on", async () => {
    const server = await startMcpServer({ tools: [echoTool()] });
    cleanups.push(() => server.close());
    const pool = createMcpPool({});
    cleanups.push(() => pool.close());
    const collected: WeakRef<object>[] = [];
    const callOnce = async (i: number) => {
      const held = { i, ballast: new Array(1000).fill(i) };
      collected.push(new WeakRef(held));
      const hooks: McpCallHooks = { onProgress: () => void held.ballast.length };
      const outcome = await pool.callTool({
        url: server.url,
        poolKey: "one-session",
        name: "echo",
        arguments: { i },
        meta: {},
        timeoutMs: 5_000,
        hooks,
      });
      expect(resultValue(outcome)).toMatchObject({ args: { i } });
    };
    for (let i = 0; i < 20; i++) await callOnce(i);
    // Timers and stream ends of the last exchanges settle, then collect.
    for (let round = 0; round < 5 && collected.some((ref) => ref.deref() !== undefined); round++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      gc();
    }
    expect(collected.flatMap((ref, i) => (ref.deref() === undefined ? [] : [i]))).toEqual([]);
    // The session is still open and still answers.
    await callOnce(20);
  });
});
