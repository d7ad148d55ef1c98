/**
 * The generated .d.ts must be something the TypeScript compiler accepts under `strict`, and it
 * must catch the mistakes a model makes when calling tools: these tests type-check scripts
 * against it in an in-memory program, the way runs are checked before they start.
 */
import { readFileSync } from "node:fs";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { jsonSchemaToTs, renderDts } from "../../src/declarations/index.ts";
import type { ObservedResult } from "../../src/declarations/index.ts";
import { EMPTY_TOOLSET } from "../../src/shared/toolset.ts";
import type { PinnedToolset } from "../../src/shared/toolset.ts";

const golden = new URL("./golden/", import.meta.url);
const readJson = (file: string): unknown => JSON.parse(readFileSync(new URL(file, golden), "utf8")) as unknown;
const toolset = readJson("toolset.json") as PinnedToolset;
const observed = readJson("observed.json") as Record<string, ObservedResult>;
const workflowInputs = readJson("workflow-inputs.json") as Record<string, string>;
const schemas = readJson("schemas.json") as Record<string, unknown>;

const options: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  noUncheckedIndexedAccess: true,
  isolatedModules: true,
  erasableSyntaxOnly: true,
  // Unlike the run-time check, the generated file itself is checked here.
  skipLibCheck: false,
  target: ts.ScriptTarget.ES2023,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ["lib.es2023.d.ts"],
  types: [],
};

/** Diagnostics of an in-memory program over `files`, each as `file:line:TScode message`. */
function check(files: Record<string, string>): string[] {
  const host = ts.createCompilerHost(options);
  const fromDisk = host.getSourceFile.bind(host);
  const virtual = (name: string): string | undefined => files[name.replace(/^\/virtual\//, "")];
  host.getSourceFile = (name, languageVersion, ...rest) => {
    const text = virtual(name);
    return text === undefined
      ? fromDisk(name, languageVersion, ...rest)
      : ts.createSourceFile(name, text, languageVersion);
  };
  const { fileExists, readFile } = host;
  host.fileExists = (name) => virtual(name) !== undefined || fileExists.call(host, name);
  host.readFile = (name) => virtual(name) ?? readFile.call(host, name);
  const program = ts.createProgram(
    Object.keys(files).map((f) => `/virtual/${f}`),
    options,
    host,
  );
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    const where = d.file ? d.file.fileName.replace("/virtual/", "") : "global";
    return `${where}:${line}:TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
  });
}

/** Lines marked `// TS2345` in a script, as the `main.ts:line:TScode` its diagnostics must match. */
function expectedMarks(script: string): string[] {
  return script
    .split("\n")
    .flatMap((text, i) => [...text.matchAll(/\/\/ (TS\d+)/g)].map((m) => `main.ts:${i + 1}:${m[1]}`));
}

const GOOD_SCRIPT = `import { "file-system" as fs, github, harness, sleep, waitForSignal, webhook, workflows, ToolError } from "rewind:tools";
import type { ToolErrorCode } from "rewind:tools";

export default async function main(input: { repo: string }) {
  const issues = await github.list_issues({ repo: input.repo, state: "open" });
  const stale = issues.filter((i) => i.updated_at < "2026-01-01").map((i) => i.number);
  const created = await github["create-issue"]({ repo: input.repo, title: "Stale", labels: ["triage"] });
  const me: unknown = await github.get_me();
  await github.search({ q: "is:open", sort: null });
  const tree = await fs.read_tree({ path: "/", depth: null });
  const names: string[] = (tree.children ?? []).map((c) => c.name);
  const answer = await harness.ask_user({ question: "Close them?", choices: ["yes", "no"] });
  const customer = await harness.lookup({ email: "a@example.com" });
  const plan: string | null | undefined = customer.plan;
  await sleep("2s");
  await sleep(10);
  const hook = await webhook("done");
  const approval = await waitForSignal<{ approved: boolean }>("approve", { timeout: "1 day" });
  const run = await workflows.nightly_report.start({ day: 1 });
  await workflows["send-digest"].signal(run.runId, "go");
  const response = await fetch("https://api.github.com/", { method: "GET", headers: { accept: "application/json" } });
  const body: unknown = response.ok ? await response.json() : await response.text();
  try {
    await github.list_issues({ repo: "x" });
  } catch (error) {
    const code: ToolErrorCode | undefined = error instanceof ToolError ? error.code : undefined;
    if (code === "timedOut") return { timedOut: true };
  }
  return { stale, url: created.url, me, names, yes: answer.yes, plan, hook: hook.url, approved: approval.approved, body };
}
`;

const BAD_SCRIPT = `import { github, harness, sleep, workflows, ToolError, nothing } from "rewind:tools"; // TS2305
export default async function main() {
  await github.list_issues({ repo: 1 }); // TS2322
  await github.list_issues({}); // TS2345
  await github.list_issues({ repo: "a", state: "stale" }); // TS2322
  await github.list_issues({ repo: "a", page: 2 }); // TS2353
  await github.delete_repo({ repo: "a" }); // TS2339
  await github.create_issue({ repo: "a", title: "t" }); // TS2551
  await harness.lookup(); // TS2554
  await harness.ask_user({ question: "?", choices: ["only one"] }); // TS2322
  const url: number = (await github["create-issue"]({ repo: "a", title: "t" })).url; // TS2322
  await sleep(true); // TS2345
  await fetch(42); // TS2345
  await workflows.nightly_report.start({ day: "monday" }); // TS2322
  await workflows.nightly_report.start(); // TS2554
  await workflows["send-digest"].start({ anything: true });
  try { await sleep(1); } catch (e) { if (e instanceof ToolError && e.code === "nope") return url; } // TS2367
  return 0;
}
`;

describe("generated .d.ts under strict", () => {
  const dts = renderDts(toolset, { observed, workflowInputs });

  it("accepts a script that uses every tool and built-in correctly", () => {
    expect(check({ "rewind-tools.d.ts": dts, "main.ts": GOOD_SCRIPT })).toEqual([]);
  }, 30_000);

  it("reports each misuse where it happens", () => {
    const found = check({ "rewind-tools.d.ts": dts, "main.ts": BAD_SCRIPT }).map((d) => d.split(" ")[0]);
    expect(found.sort()).toEqual(expectedMarks(BAD_SCRIPT).sort());
  }, 30_000);

  it("has no fetch, workflows or string-named groups when the toolset enables none", () => {
    const script = `import { workflows } from "rewind:tools"; // TS2305\nawait fetch("https://example.com/"); // TS2304\nexport {};\n`;
    const found = check({ "rewind-tools.d.ts": renderDts(EMPTY_TOOLSET), "main.ts": script }).map(
      (d) => d.split(" ")[0],
    );
    expect(found.sort()).toEqual(expectedMarks(script).sort());
  }, 30_000);

  it("keeps tool names that are keywords or not identifiers callable", () => {
    const names = ["new", "constructor", "delete", "get", "then", "list-issues", "2fa", "with space"];
    const tools = names.map((name) => ({
      name,
      inputSchema: { type: "object", properties: { new: { type: "string" } }, required: ["new"] },
    }));
    const dts = renderDts({ ...EMPTY_TOOLSET, hostTools: { kit: { taskQueue: "q", tools } } });
    const calls = names.map((name) => `  await kit[${JSON.stringify(name)}]({ new: "x" });`).join("\n");
    const script = `import { kit } from "rewind:tools";\nexport default async function main() {\n${calls}\n  await kit.new({ new: "y" });\n}\n`;
    expect(check({ "rewind-tools.d.ts": dts, "main.ts": script })).toEqual([]);
  }, 30_000);

  it("renders every schema of the set as a type that compiles", () => {
    const aliases = Object.values(schemas).map((schema, i) => `type S${i} = ${jsonSchemaToTs(schema)};`);
    const index = Object.keys(schemas).indexOf("additional-properties");
    const usage = `export const mixed: S${index} = { mixed: { name: "n", extra: 1 }, "optional-and-extra": { n: 1, on: true } };`;
    expect(check({ "main.ts": `${aliases.join("\n")}\n${usage}\n` })).toEqual([]);
  }, 30_000);
});
