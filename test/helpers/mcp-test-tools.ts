/**
 * Tool factories for the test MCP server: the behaviours durable dispatch must cope with — an
 * idempotent effect keyed by `codes.rewind/idempotency-key`, a slow tool that counts calls in
 * flight, a tool that drops its connection on the first attempts, a tool failing with `isError`,
 * a tool that holds each call until the test releases it, one whose first attempt's outcome is
 * unknown.
 * Each returns the tool and the counters a test asserts on.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { TestToolDefinition } from "./mcp-test-server.ts";

export const IDEMPOTENCY_KEY = "codes.rewind/idempotency-key";

const OBJECT = { type: "object" } as const;
const text = (value: unknown): CallToolResult => ({ content: [{ type: "text", text: JSON.stringify(value) }] });

/** Answers with its arguments and `_meta`, as JSON text. */
export function echoTool(name = "echo"): TestToolDefinition {
  return {
    name,
    description: "Returns its arguments and _meta.",
    inputSchema: { type: "object", properties: { message: { type: "string" } }, additionalProperties: true },
    handler: async (args, { meta }) => text({ args, meta }),
  };
}

/** `count` trivial tools named tool_00, tool_01… for pagination. */
/**
 * `echo` answering after 2–16 ms: results of parallel calls reach history in another order than
 * the steps that issued them were taken.
 */
export function jitteredEchoTool(name = "echo"): TestToolDefinition {
  return {
    name,
    inputSchema: OBJECT,
    handler: async (args) => {
      await new Promise((resolve) => setTimeout(resolve, 2 + Math.floor(Math.random() * 15)));
      return text(args);
    },
  };
}

export function manyTools(count: number): TestToolDefinition[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `tool_${String(i).padStart(2, "0")}`,
    description: `Tool number ${i}.`,
    inputSchema: OBJECT,
    handler: async () => text(i),
  }));
}

/**
 * Performs an effect once per idempotency key (calls without a key always perform it) and returns
 * the same answer on every repetition. With `idempotent: false` it ignores the key.
 */
export function effectCounterTool(options: { name?: string; idempotent?: boolean } = {}) {
  const effects = new Map<string, number>();
  const state = { effects, total: 0 };
  const tool: TestToolDefinition = {
    name: options.name ?? "record_effect",
    description: "Records an effect, once per idempotency key.",
    inputSchema: { type: "object", properties: { label: { type: "string" } } },
    async handler(args, { meta }) {
      const key = meta[IDEMPOTENCY_KEY];
      const keyed = typeof key === "string" && options.idempotent !== false;
      if (!keyed || !effects.has(key)) {
        state.total++;
        if (typeof key === "string") effects.set(key, (effects.get(key) ?? 0) + 1);
      }
      return {
        content: [{ type: "text", text: `effect ${String(args.label ?? "")}` }],
        structuredContent: { key: typeof key === "string" ? key : null, effects: state.total },
      };
    },
  };
  return { tool, state };
}

/** Sleeps `delayMs` (stops early when the call is cancelled) and tracks calls in flight. */
export function slowTool(options: { delayMs: number; name?: string }) {
  const state = { inFlight: 0, maxInFlight: 0, started: 0, completed: 0, cancelled: 0 };
  const tool: TestToolDefinition = {
    name: options.name ?? "slow",
    inputSchema: OBJECT,
    async handler(_args, { signal }) {
      state.started++;
      state.inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
      try {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, options.delayMs);
          signal.addEventListener(
            "abort",
            () => {
              clearTimeout(timer);
              state.cancelled++;
              resolve();
            },
            { once: true },
          );
        });
        state.completed++;
        return text({ slept: options.delayMs });
      } finally {
        state.inFlight--;
      }
    },
  };
  return { tool, state };
}

/**
 * Destroys the connection of the first `dropAttempts` attempts of each key, then answers. With
 * `afterFirstEvent`, the response stream has begun (headers and one event) when it drops.
 */
export function droppingTool(options: { dropAttempts: number; name?: string; afterFirstEvent?: boolean }) {
  const state = { drops: 0, answers: 0 };
  const tool: TestToolDefinition = {
    name: options.name ?? "flaky",
    inputSchema: OBJECT,
    async handler(_args, { attempt, dropConnection, notify, signal }) {
      if (attempt <= options.dropAttempts) {
        state.drops++;
        if (options.afterFirstEvent) {
          await notify("working");
          // A margin, not a wait the test relies on: the event has been written, and this gives
          // the client time to read it before the socket is destroyed (what it has read is not
          // observable from here). Were it not read, the call would fail as another kind of drop.
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        dropConnection();
        // No answer could reach the client now; end when the session does.
        return new Promise<CallToolResult>((resolve) =>
          signal.addEventListener("abort", () => resolve(text("dropped")), { once: true }),
        );
      }
      state.answers++;
      return text({ attempt });
    },
  };
  return { tool, state };
}

/**
 * Loses its connection on the first attempt of each key once the call is sent, so the caller
 * cannot know whether it charged; a later attempt answers `{ charged: true, attempt }`, which its
 * output schema declares (a result a harness gives when it resolves the call is checked against it).
 */
export function chargeOnRetryTool(name = "charge"): TestToolDefinition {
  return {
    name,
    inputSchema: OBJECT,
    outputSchema: {
      type: "object",
      properties: { charged: { type: "boolean" }, attempt: { type: "integer" } },
      required: ["charged"],
    },
    async handler(_args, { attempt, dropConnection, signal }) {
      if (attempt === 1) {
        dropConnection();
        return new Promise<CallToolResult>((resolve) =>
          signal.addEventListener("abort", () => resolve({ content: [] }), { once: true }),
        );
      }
      return { content: [], structuredContent: { charged: true, attempt } };
    },
  };
}

/** Fails as a tool: a result with `isError: true`, which is not a protocol error. */
export function failingTool(message = "the repository does not exist", name = "fail"): TestToolDefinition {
  return {
    name,
    inputSchema: OBJECT,
    handler: async () => ({ isError: true, content: [{ type: "text", text: message }] }),
  };
}

/** Asks the client a question (`elicitation/create`) during each call, and answers with the client's answer. */
export function askingTool(
  name: string,
  message: string,
  requestedSchema: Record<string, unknown>,
): TestToolDefinition {
  return {
    name,
    inputSchema: OBJECT,
    handler: async (_args, extra) => text(await extra.ask("elicitation/create", { message, requestedSchema })),
  };
}

/** Returns a fixed result, for the rules of what a script gets. */
export function fixedTool(
  name: string,
  result: CallToolResult,
  schemas: Partial<Pick<TestToolDefinition, "outputSchema">> = {},
): TestToolDefinition {
  return { name, inputSchema: OBJECT, ...schemas, handler: async () => result };
}

/**
 * Holds each call until the test releases it (or the call is cancelled), keyed by the run id in
 * the call's idempotency key: a run's call stays in flight for as long as a test needs it to.
 */
export function gateTool(name = "gate") {
  const held = new Map<string, () => void>();
  const tool: TestToolDefinition = {
    name,
    inputSchema: OBJECT,
    handler: (_args, { meta, signal }) =>
      new Promise((resolve) => {
        const runId = String(meta[IDEMPOTENCY_KEY]).split("/")[0] ?? "";
        const release = () => resolve(text({ released: runId }));
        held.set(runId, release);
        signal.addEventListener("abort", release, { once: true });
      }),
  };
  return {
    tool,
    /** Whether a call of this run is at the tool now. */
    holds: (runId: string) => held.has(runId),
    /** Lets the run's call answer. */
    release(runId: string) {
      held.get(runId)?.();
      held.delete(runId);
    },
    releaseAll() {
      for (const release of held.values()) release();
      held.clear();
    },
  };
}
