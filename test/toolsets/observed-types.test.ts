/**
 * Declarations get better as runs record results: a tool without an output schema shows the
 * merged shape of what it returned, marked @observed with a count — and never a value. A run
 * reports what it saw through the worker's sink, which signals the toolset's record.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-test-server.ts";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";
import { registerToolset, startRun } from "../helpers/toolset.ts";
import { waitFor } from "../helpers/wait-for.ts";
import type { WorkflowHandle } from "@temporalio/client";
import type { WorkflowInfo } from "@temporalio/workflow";
import { toolsetWorkflowId } from "../../src/shared/index.ts";
import { createObservationReports } from "../../src/worker/observation-sink.ts";
import { observeResultsSignal } from "../../src/workflows/messages.ts";

const CANARY = "canary-value-7f3a";
let stack: RewindStack;
let server: TestMcpServer;
let calls = 0;
let variedCalls = 0;

beforeAll(async () => {
  stack = await startRewindStack();
  server = await startMcpServer({
    tools: [
      {
        name: "lookup",
        inputSchema: { type: "object" },
        handler: async () => {
          calls += 1;
          const result =
            calls % 2 === 1
              ? { id: calls, name: CANARY, tags: [CANARY] }
              : { id: String(calls), extra: { deep: true } };
          return { content: [{ type: "text", text: JSON.stringify(result) }] };
        },
      },
      {
        name: "typed",
        inputSchema: { type: "object" },
        outputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
        handler: async () => ({ content: [], structuredContent: { n: 1, hidden: CANARY } }),
      },
      {
        name: "last",
        inputSchema: { type: "object" },
        handler: async () => ({ content: [{ type: "text", text: JSON.stringify({ lastKey: CANARY }) }] }),
      },
      {
        name: "varied",
        inputSchema: { type: "object" },
        handler: async () => {
          variedCalls += 1;
          return {
            content: [
              { type: "text", text: JSON.stringify(variedCalls % 2 === 1 ? { first: 1 } : { second: CANARY }) },
            ],
          };
        },
      },
      {
        name: "before_failure",
        inputSchema: { type: "object" },
        handler: async () => ({ content: [{ type: "text", text: JSON.stringify({ seen: true }) }] }),
      },
      {
        name: "digits",
        inputSchema: { type: "object" },
        handler: async () => ({ content: [{ type: "text", text: "9007199254740993" }] }),
      },
    ],
  });
});
afterAll(async () => {
  await stack?.stop();
  await server?.close();
});

/** The toolset's .d.ts once it says `expected` (observed types reach the toolset as the run goes). */
function dtsOnceItSays(toolset: string, expected: string): Promise<string> {
  return waitFor(
    `the .d.ts of ${toolset} to say ${JSON.stringify(expected)}`,
    () => fetch(`${stack.api.url}/v1/toolsets/${toolset}/declarations?format=dts`).then((r) => r.text()),
    { timeoutMs: 10_000, intervalMs: 200, until: (dts) => dts.includes(expected) },
  );
}

describe("observed result types", () => {
  it("renders the merged shape of recorded results, marked @observed, without values", async () => {
    const toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
    const before = await fetch(`${stack.api.url}/v1/toolsets/${toolset}/declarations?format=dts`).then((r) => r.text());
    expect(before).toContain("lookup(args?: {}): Promise<unknown>;");
    const id = await startRun(stack, {
      toolset,
      script:
        'import { svc } from "rewind:tools";\nexport default async () => { for (let i = 0; i < 4; i++) await svc.lookup({}); await svc.typed({}); return "ok"; };',
    });
    expect((await waitForRun(stack, id)).status).toBe("completed");

    const dts = await dtsOnceItSays(toolset, "@observed from 4 results");
    expect(dts).toContain("@observed from 4 results");
    expect(dts).toMatch(
      /lookup\(args\?: \{\}\): Promise<\{ extra\?: \{ deep: boolean \}; id: number \| string; name\?: string; tags\?: string\[\] \}>;/,
    );
    expect(dts).toContain("typed(args?: {}): Promise<{ n: number }>;");
    // The run reported them through the worker's sink: no signal of its own, so no workflow task
    // for Temporal to confirm one, and nothing to wait for before it ended.
    const events = (await stack.client.workflow.getHandle(id).fetchHistory()).events ?? [];
    expect(events.filter((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes)).toHaveLength(0);
    expect(events.filter((e) => e.externalWorkflowExecutionSignaledEventAttributes)).toHaveLength(0);
    const prompt = await fetch(`${stack.api.url}/v1/toolsets/${toolset}/declarations?format=prompt`).then((r) =>
      r.text(),
    );
    expect(prompt).toContain("@observed from 4 results");
    for (const text of [dts, prompt]) expect(text).not.toContain(CANARY);

    // Scripts are now checked against what was observed.
    const misuse = await stack.request("POST", "/v1/runs", {
      toolset,
      script: 'import { svc } from "rewind:tools";\nexport default async () => (await svc.lookup({})).nope;',
    });
    expect(misuse.status).toBe(422);
  }, 60_000);

  it("keeps a shape first seen in the step the run ends on", async () => {
    const toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
    const id = await startRun(stack, {
      toolset,
      script:
        'import { svc } from "rewind:tools";\nexport default async () => { await svc.varied({}); await svc.varied({}); return await svc.last({}); };',
    });
    expect((await waitForRun(stack, id)).status).toBe("completed");
    const dts = await dtsOnceItSays(toolset, "last(args?: {}): Promise<{ lastKey: string }>;");
    expect(dts).toContain("last(args?: {}): Promise<{ lastKey: string }>;");
    // The second result's shape was new too, and came with the step that ended the run.
    expect(dts).toMatch(/varied\(args\?: \{\}\): Promise<\{ first\?: number; second\?: string \}>;/);
    expect(dts).not.toContain(CANARY);
  }, 60_000);

  it("keeps the shapes a run saw before it failed", async () => {
    const toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
    const id = await startRun(stack, {
      toolset,
      script:
        'import { svc } from "rewind:tools";\nexport default async () => { await svc.before_failure({}); throw new Error("boom"); };',
    });
    expect((await waitForRun(stack, id)).status).toBe("failed");
    const dts = await dtsOnceItSays(toolset, "before_failure(args?: {}): Promise<{ seen: boolean }>;");
    expect(dts).toContain("before_failure(args?: {}): Promise<{ seen: boolean }>;");
  }, 60_000);

  it("observes the text a tool returns as the string the script got", async () => {
    const toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
    const id = await startRun(stack, {
      toolset,
      script:
        'import { svc } from "rewind:tools";\nexport default async () => { const d = await svc.digits({}); return typeof d; };',
    });
    const done = await waitForRun(stack, id);
    expect([done.status, done.result]).toEqual(["completed", "string"]);
    const dts = await dtsOnceItSays(toolset, "digits(args?: {}): Promise<string>;");
    expect(dts).toContain("digits(args?: {}): Promise<string>;");
  }, 60_000);

  it("sends the reports of many runs gathered: one signal per record, tool and shape, counts summed", async () => {
    const toolset = await registerToolset(stack, { mcpServers: { svc: { url: server.url } } });
    const recordId = toolsetWorkflowId("default", toolset);
    const record = stack.client.workflow.getHandle(recordId);
    const signalsBefore = observeSignalsIn(await record.fetchHistory());
    // Toolsets are content-addressed: earlier tests' runs may have observed `last` on this one.
    const declarations = () =>
      fetch(`${stack.api.url}/v1/toolsets/${toolset}/declarations?format=dts`).then((r) => r.text());
    const countBefore = observedCountOf(await declarations(), "last");
    // A window longer than the test: only flush sends, so what goes out is exactly what was gathered.
    const reports = createObservationReports(stack.client, 60_000);
    const report = (shape: Record<string, unknown>): void => {
      void reports.sinks.observations.observed.fn({} as WorkflowInfo, { recordId, tool: "svc.last", shape, count: 2 });
    };
    const lastKey = { type: "object", properties: { lastKey: { type: "string" } }, required: ["lastKey"] };
    for (let i = 0; i < 5; i++) report(lastKey);
    report({ type: "object", properties: { other: { type: "number" } }, required: ["other"] });
    await reports.flush();

    const dts = await dtsOnceItSays(toolset, `@observed from ${countBefore + 12} results`);
    expect(observedCountOf(dts, "last")).toBe(countBefore + 12);
    expect(dts).toContain("last(args?: {}): Promise<{ lastKey?: string; other?: number }>;");
    const signals = observeSignalsIn(await record.fetchHistory()) - signalsBefore;
    expect(signals).toBe(2);
    // Nothing is left to send: a second flush sends no signal.
    await reports.flush();
    expect(observeSignalsIn(await record.fetchHistory()) - signalsBefore).toBe(2);
  }, 60_000);
});

/** The count in the `@observed` note of `tool`'s declaration (0 without one). */
function observedCountOf(dts: string, tool: string): number {
  // The note ends a JSDoc of its own (`/** @observed from 3 results */`) or of several lines.
  const note = new RegExp(`@observed from (\\d+) results?(?: |\\n\\s*)\\*/\\n\\s*${tool}\\(`).exec(dts);
  return note ? Number(note[1]) : 0;
}

/** The observeResults signals a toolset record's history holds. */
function observeSignalsIn(history: Awaited<ReturnType<WorkflowHandle["fetchHistory"]>>): number {
  return (history.events ?? []).filter(
    (event) => event.workflowExecutionSignaledEventAttributes?.signalName === observeResultsSignal.name,
  ).length;
}
