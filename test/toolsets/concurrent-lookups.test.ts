/**
 * Runs posted together look their toolset up together: the registry reads the toolset's record
 * and its observed shapes once for all of them (each read is a Temporal call, the shapes a query
 * the record workflow answers one at a time), and a read that fails is not remembered.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { echoTool } from "../helpers/mcp-test-tools.ts";
import { startRewindStack, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset } from "../helpers/toolset.ts";
import { createTemporalToolsetStore } from "../../src/storage/index.ts";
import { createToolsetRegistry, type RegistryDeps } from "../../src/toolsets/toolset-registry.ts";
import { getObservedQuery } from "../../src/workflows/messages.ts";
import { toolsetWorkflowId } from "../../src/shared/index.ts";
import type { ObservedResults } from "../../src/shared/index.ts";

const NAMESPACE = "default";
let stack: RewindStack;
let server: TestMcpServer;
let toolset: string;

beforeAll(async () => {
  stack = await startRewindStack();
  server = await startMcpServer({ tools: [echoTool()] });
  toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

/** A registry over the stack's Temporal, counting the history reads and observed-shape queries it makes. */
function countingRegistry(options: { failReads?: number; failQueries?: number } = {}) {
  const counts = { historyReads: 0, queries: 0 };
  let readsToFail = options.failReads ?? 0;
  let queriesToFail = options.failQueries ?? 0;
  const service = stack.client.workflowService;
  const client = Object.create(stack.client) as typeof stack.client;
  Object.defineProperty(client, "workflowService", {
    value: Object.assign(Object.create(service) as typeof service, {
      getWorkflowExecutionHistory: (request: Parameters<typeof service.getWorkflowExecutionHistory>[0]) => {
        counts.historyReads += 1;
        if (readsToFail > 0) {
          readsToFail -= 1;
          return Promise.reject(Object.assign(new Error("Temporal is unavailable"), { code: 14 }));
        }
        return service.getWorkflowExecutionHistory(request);
      },
    }),
  });
  const deps: RegistryDeps = {
    store: createTemporalToolsetStore(client, stack.config.temporal.taskQueue),
    listTools: () => Promise.reject(new Error("no registration here")),
    loadStoredScript: async () => undefined,
    loadObserved: async (namespace, id): Promise<ObservedResults> => {
      counts.queries += 1;
      if (queriesToFail > 0) {
        queriesToFail -= 1;
        throw new Error("the query timed out");
      }
      return stack.client.workflow.getHandle(toolsetWorkflowId(namespace, id)).query(getObservedQuery);
    },
  };
  return { registry: createToolsetRegistry(deps), counts };
}

describe("toolset lookups of runs posted together", () => {
  it("read the record and its observed shapes once for forty lookups at once", async () => {
    const { registry, counts } = countingRegistry();
    const found = await Promise.all(Array.from({ length: 40 }, () => registry.get(toolset, NAMESPACE)));
    expect(found.every((t) => t !== undefined && t === found[0])).toBe(true);
    expect(found[0]?.id).toBe(toolset);
    expect(found[0]?.dts).toContain("svc");
    expect(counts).toEqual({ historyReads: 1, queries: 1 });
    // Both are remembered: the record for good, the shapes for a few seconds.
    await registry.get(toolset, NAMESPACE);
    expect(counts).toEqual({ historyReads: 1, queries: 1 });
  });

  it("answers a toolset that does not exist with undefined, to every lookup", async () => {
    const { registry, counts } = countingRegistry();
    const missing = "ts_" + "0".repeat(26);
    const found = await Promise.all(Array.from({ length: 10 }, () => registry.get(missing, NAMESPACE)));
    expect(found).toEqual(Array.from({ length: 10 }, () => undefined));
    expect(counts.historyReads).toBe(1);
  });

  it("gives a failed read to every lookup waiting on it, and reads again for the next", async () => {
    const { registry, counts } = countingRegistry({ failReads: 1 });
    const first = await Promise.allSettled(Array.from({ length: 10 }, () => registry.get(toolset, NAMESPACE)));
    expect(first.every((r) => r.status === "rejected" && /unavailable/.test(String(r.reason)))).toBe(true);
    expect(counts.historyReads).toBe(1);
    const again = await registry.get(toolset, NAMESPACE);
    expect(again?.id).toBe(toolset);
    expect(counts.historyReads).toBe(2);
  });

  it("resolves the toolset without observed shapes when their query fails, once for all", async () => {
    const { registry, counts } = countingRegistry({ failQueries: 1 });
    const found = await Promise.all(Array.from({ length: 10 }, () => registry.get(toolset, NAMESPACE)));
    expect(found.every((t) => t?.id === toolset && t === found[0])).toBe(true);
    expect(found[0]?.observed).toEqual({});
    expect(counts.queries).toBe(1);
  });
});
