/**
 * Type-check latency of a typical script against a toolset of 50 tools, on `createTypeChecker`
 * and `renderDts` as the API uses them. Cold = the first check of a new checker (it parses the
 * ES lib and the toolset's declarations); warm = later checks of the same checker, each with a
 * slightly different script, as every run brings its own.
 */
import { createTypeChecker, type Diagnostic } from "../../src/declarations/type-check.ts";
import { renderDts } from "../../src/declarations/index.ts";
import type { JsonSchema, PinnedTool, PinnedToolset } from "../../src/shared/toolset.ts";
import type { BenchContext } from "../context.ts";
import { median, p95, since } from "../stats.ts";

export interface TypeCheckResult {
  tools: number;
  dtsBytes: number;
  renderMs: number;
  /** The very first check in this process (also pays for loading TypeScript's checker code paths). */
  firstInProcessMs: number;
  cold: { samples: number[]; medianMs: number };
  warm: { samples: number[]; medianMs: number; p95Ms: number };
}

const ENTITIES = [
  "issue",
  "pull_request",
  "comment",
  "label",
  "milestone",
  "repository",
  "user",
  "team",
  "release",
  "deployment",
];
const VERBS = ["list", "get", "create", "update", "delete"];

function entitySchema(entity: string): JsonSchema {
  return {
    type: "object",
    properties: {
      id: { type: "integer" },
      name: { type: "string", description: `Name of the ${entity}.` },
      state: { type: "string", enum: ["open", "closed", "archived"] },
      labels: { type: "array", items: { type: "string" } },
      owner: {
        type: "object",
        properties: { login: { type: "string" }, id: { type: "integer" } },
        required: ["login", "id"],
      },
      created_at: { type: "string", format: "date-time" },
      body: { type: ["string", "null"] },
    },
    required: ["id", "name", "state", "labels", "owner", "created_at"],
  };
}

function tool(group: "github" | "tracker", verb: string, entity: string): PinnedTool {
  const item = entitySchema(entity);
  const repo = { type: "string", description: "owner/name" };
  const inputs: Record<string, JsonSchema> = {
    list: {
      type: "object",
      properties: {
        repo,
        state: { type: "string", enum: ["open", "closed", "all"] },
        per_page: { type: "integer", minimum: 1, maximum: 100 },
        page: { type: "integer" },
      },
      required: ["repo"],
    },
    get: { type: "object", properties: { repo, id: { type: "integer" } }, required: ["repo", "id"] },
    create: {
      type: "object",
      properties: {
        repo,
        name: { type: "string" },
        body: { type: "string" },
        labels: { type: "array", items: { type: "string" } },
      },
      required: ["repo", "name"],
    },
    update: {
      type: "object",
      properties: {
        repo,
        id: { type: "integer" },
        name: { type: "string" },
        state: { type: "string", enum: ["open", "closed"] },
      },
      required: ["repo", "id"],
    },
    delete: { type: "object", properties: { repo, id: { type: "integer" } }, required: ["repo", "id"] },
  };
  const outputs: Record<string, JsonSchema> = {
    list: {
      type: "object",
      properties: { items: { type: "array", items: item }, total: { type: "integer" } },
      required: ["items", "total"],
    },
    get: item,
    create: item,
    update: item,
    delete: { type: "object", properties: { deleted: { type: "boolean" } }, required: ["deleted"] },
  };
  return {
    name: `${verb}_${entity}`,
    description: `${verb[0]?.toUpperCase()}${verb.slice(1)} ${entity.replace("_", " ")}s in ${group}.`,
    inputSchema: inputs[verb] ?? { type: "object" },
    outputSchema: outputs[verb] ?? true,
  };
}

/** 50 tools in two groups: every verb of every entity; `tracker` has the last five entities. */
export function fiftyToolToolset(): PinnedToolset {
  const github: PinnedTool[] = [];
  const tracker: PinnedTool[] = [];
  ENTITIES.forEach((entity, e) =>
    VERBS.forEach((verb) => (e < 5 ? github : tracker).push(tool(e < 5 ? "github" : "tracker", verb, entity))),
  );
  return {
    format: 1,
    mcpServers: {
      github: { url: "http://127.0.0.1:9/github", tools: github },
      tracker: { url: "http://127.0.0.1:9/tracker", tools: tracker },
    },
    hostTools: {},
    workflows: {},
    policies: {},
  };
}

/** What a model writes: a few tools, a loop, Promise.all, error handling, a typed result. */
export function typicalScript(variant: number): string {
  return `import { github, tracker, sleep, ToolError } from "rewind:tools";

interface Summary { repo: string; stale: number; labelled: string[]; failed: number }

export default async function main(input: { repo: string; maxAgeDays: number }): Promise<Summary> {
  const cutoff = Date.now() - input.maxAgeDays * 86_400_000 - ${variant};
  const { items } = await github.list_issue({ repo: input.repo, state: "open", per_page: 100 });
  const stale = items.filter((issue) => Date.parse(issue.created_at) < cutoff && !issue.labels.includes("keep"));
  const labelled: string[] = [];
  let failed = 0;
  const results = await Promise.all(stale.slice(0, 16).map(async (issue) => {
    try {
      const updated = await github.update_issue({ repo: input.repo, id: issue.id, state: "closed" });
      await tracker.create_release({ repo: input.repo, name: \`closed #\${updated.id} (\${updated.owner.login})\` });
      return updated.name;
    } catch (error) {
      if (error instanceof ToolError && error.code === "toolFailed") { failed += 1; return undefined; }
      throw error;
    }
  }));
  for (const name of results) if (name !== undefined) labelled.push(name);
  if (failed > 0) await sleep("1 minute");
  return { repo: input.repo, stale: stale.length, labelled, failed };
}
`;
}

function assertClean(diagnostics: Diagnostic[]): void {
  if (diagnostics.length > 0)
    throw new Error(`the typical script does not type-check: ${JSON.stringify(diagnostics.slice(0, 3))}`);
}

export function measureTypeCheck(ctx: BenchContext): TypeCheckResult {
  const toolset = fiftyToolToolset();
  const renderStarted = performance.now();
  const dts = renderDts(toolset);
  const renderMs = since(renderStarted);
  const input = (variant: number) => ({
    source: typicalScript(variant),
    declarations: dts,
    declarationsKey: "ts_bench50",
  });

  const cold: number[] = [];
  let firstInProcessMs = Number.NaN;
  for (let round = 0; round <= ctx.sizes.typeCheck.coldRounds; round++) {
    const checker = createTypeChecker();
    const started = performance.now();
    assertClean(checker.check(input(round)));
    const elapsed = since(started);
    if (round === 0) firstInProcessMs = elapsed;
    else cold.push(elapsed);
  }
  ctx.log(`type-check cold: first in process ${firstInProcessMs.toFixed(0)} ms, median ${median(cold).toFixed(0)} ms`);

  const checker = createTypeChecker();
  assertClean(checker.check(input(0)));
  const warm: number[] = [];
  for (let i = 1; i <= ctx.sizes.typeCheck.warmChecks; i++) {
    const started = performance.now();
    assertClean(checker.check(input(i)));
    warm.push(since(started));
  }
  ctx.log(`type-check warm: median ${median(warm).toFixed(1)} ms, p95 ${p95(warm).toFixed(1)} ms`);
  return {
    tools: 50,
    dtsBytes: Buffer.byteLength(dts),
    renderMs,
    firstInProcessMs,
    cold: { samples: cold, medianMs: median(cold) },
    warm: { samples: warm, medianMs: median(warm), p95Ms: p95(warm) },
  };
}
