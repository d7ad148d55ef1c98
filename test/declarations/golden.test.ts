/**
 * Golden tests: the exact text of both renderings, for a fixed set of schemas and a fixture
 * toolset. The files under golden/ are the documentation of the format; after a deliberate
 * change, rewrite them with `UPDATE_GOLDEN=1 npx vitest run test/declarations` and read the diff.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  jsonSchemaToTs,
  renderCompactPrompt,
  renderDts,
  renderPrompt,
  withScriptGuide,
} from "../../src/declarations/index.ts";
import type { ObservedResult } from "../../src/declarations/index.ts";
import { EMPTY_TOOLSET } from "../../src/shared/toolset.ts";
import type { PinnedToolset } from "../../src/shared/toolset.ts";

const golden = new URL("./golden/", import.meta.url);

function readJson(file: string): unknown {
  return JSON.parse(readFileSync(new URL(file, golden), "utf8")) as unknown;
}

function expectGolden(file: string, actual: string): void {
  const url = new URL(file, golden);
  if (process.env.UPDATE_GOLDEN === "1") writeFileSync(url, actual);
  expect(actual).toBe(readFileSync(url, "utf8"));
}

const schemas = readJson("schemas.json") as Record<string, unknown>;
const toolset = readJson("toolset.json") as PinnedToolset;
const observed = readJson("observed.json") as Record<string, ObservedResult>;
/** The input types of the fixture's stored workflows: `nightly_report` declares one, `send-digest` none. */
const workflowInputs = readJson("workflow-inputs.json") as Record<string, string>;

describe("jsonSchemaToTs golden", () => {
  it("renders the schema set for the type-checker", () => {
    const text = Object.entries(schemas)
      .map(([name, schema]) => `// ${name}\n${jsonSchemaToTs(schema)}\n`)
      .join("\n");
    expectGolden("schemas.dts.txt", text);
  });

  it("renders the schema set for the prompt", () => {
    const text = Object.entries(schemas)
      .map(([name, schema]) => `${name}: ${jsonSchemaToTs(schema, { style: "prompt" })}\n`)
      .join("");
    expectGolden("schemas.prompt.txt", text);
  });
});

describe("toolset golden", () => {
  it("renders the fixture toolset as a .d.ts", () => {
    expectGolden("toolset.d.ts.txt", renderDts(toolset, { observed, workflowInputs }));
  });

  it("renders the fixture toolset for the prompt", () => {
    expectGolden("toolset.prompt.txt", renderPrompt(toolset, { observed, workflowInputs }));
  });

  it("renders the fixture toolset for the prompt after the guide to writing a script", () => {
    expectGolden("toolset.guide.prompt.txt", withScriptGuide(renderPrompt(toolset, { observed, workflowInputs })));
  });

  it("renders only the built-ins for an empty toolset", () => {
    expectGolden("empty.d.ts.txt", renderDts(EMPTY_TOOLSET));
    expectGolden("empty.prompt.txt", renderPrompt(EMPTY_TOOLSET));
  });
});

describe("compact and selected golden", () => {
  it("renders the fixture toolset compact: one line per tool, no types", () => {
    expectGolden("toolset.compact.prompt.txt", renderCompactPrompt(toolset, { observed, workflowInputs }));
  });

  it("renders only the chosen tools and the built-ins, for the prompt and the type-checker", () => {
    const tools = new Set(["file-system.read_tree", "github.list_issues", "harness.lookup"]);
    expectGolden("toolset.selected.prompt.txt", renderPrompt(toolset, { observed, workflowInputs, tools }));
    expectGolden("toolset.selected.d.ts.txt", renderDts(toolset, { observed, workflowInputs, tools }));
  });
});
