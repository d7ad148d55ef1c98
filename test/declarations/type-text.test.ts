/**
 * The gate between a stored input type and the declarations: only one type on one line is
 * written into a .d.ts or a prompt; anything else, however it got into a record, renders as
 * `unknown`, and the declarations still compile.
 */
import { describe, expect, it } from "vitest";
import { checkedTypeText, createTypeChecker, renderDts, renderPrompt } from "../../src/declarations/index.ts";
import { promptTypeText } from "../../src/declarations/type-text.ts";
import { EMPTY_TOOLSET } from "../../src/shared/toolset.ts";

const toolset = { ...EMPTY_TOOLSET, workflows: { triage: "wf_1" } };

describe("checkedTypeText", () => {
  it("accepts one type", () => {
    for (const text of [
      "{ repo: string; limit?: number; }",
      '"a" | "b" | undefined',
      "Record<string, number[]>",
      "[string, ...boolean[]]",
      "{ id: `run_${string}`; }",
    ])
      expect(checkedTypeText(text), text).toBe(text);
  });

  it("refuses statements, comments, lines, imports, typeof and broken text", () => {
    for (const text of [
      "",
      "string); declare const leaked: 1; type Y = (number",
      "number; export const x = 1",
      "string // }",
      "string /* */",
      "{ a: string;\n}",
      'import("node:fs").Stats',
      "typeof globalThis",
      "{ a: string",
      "1 2",
      "x".repeat(4001),
    ])
      expect(checkedTypeText(text), text).toBeUndefined();
  });

  it("writes object members apart by commas for the prompt", () => {
    expect(promptTypeText('{ a: { b: string; c: "x;y"; }; d?: number; }')).toBe(
      '{ a: { b: string, c: "x;y" }, d?: number }',
    );
  });
});

describe("workflow input types in the declarations", () => {
  it("renders a stored type, optional when it takes undefined, and unknown otherwise", () => {
    const typed = renderDts(toolset, { workflowInputs: { triage: "{ repo: string; }" } });
    expect(typed).toContain("triage: { start(input: { repo: string; }): Promise<");
    const optional = renderDts(toolset, { workflowInputs: { triage: "{ repo: string; } | undefined" } });
    expect(optional).toContain("triage: { start(input?: { repo: string; } | undefined): Promise<");
    expect(renderDts(toolset)).toContain("triage: { start(input?: unknown): Promise<");
    expect(renderPrompt(toolset, { workflowInputs: { triage: "{ repo: string; n?: number; }" } })).toContain(
      "workflows.triage.start(input: { repo: string, n?: number }) → ",
    );
    expect(renderPrompt(toolset)).toContain("workflows.triage.start(input?) → ");
  });

  it("renders text that is not one type as unknown, and the declarations still type-check", () => {
    const hostile = "string): void; }; export const leaked: { x(input: string";
    const dts = renderDts(toolset, { workflowInputs: { triage: hostile } });
    expect(dts).not.toContain("leaked");
    expect(dts).toContain("triage: { start(input?: unknown): Promise<");
    expect(renderPrompt(toolset, { workflowInputs: { triage: hostile } })).toContain(
      "workflows.triage.start(input?) → ",
    );
    const script = `import { workflows } from "rewind:tools";
export default async () => (await workflows.triage.start({ any: "thing" })).runId;`;
    expect(createTypeChecker().check({ source: script, declarations: dts, declarationsKey: "ts_hostile" })).toEqual([]);
  });
});
