/**
 * What a harness asks of a large toolset besides its full declarations: the compact prompt (one
 * line per tool), the full declarations of a few chosen tools, and the tools that best match a
 * few words. The full renderings are made once per toolset by the registry; these are made on
 * request, from the same pinned document and observed shapes. The ranker's index is kept per
 * resolved toolset, so a harness searching the same toolset again does not rebuild it.
 */
import { compactLine, renderCompactPrompt, renderDts, renderPrompt } from "../declarations/index.ts";
import { listToolGroups, type PinnedTool, type PinnedToolset } from "../shared/index.ts";
import { createToolRanker, type ToolRanker } from "./tool-ranker.ts";
import type { ResolvedToolset } from "./toolset-registry.ts";

export interface DeclarationsRequest {
  format: "dts" | "prompt";
  /** Prompt only: one line per tool, without types. */
  compact?: boolean;
  /** Only these tools (qualified names), which must all be in the toolset. */
  tools?: readonly string[];
}

export interface FoundTool {
  /** Qualified name, `group.tool`, as `?tools=` takes it. */
  name: string;
  /** The tool's line of the compact prompt rendering. */
  line: string;
  score: number;
}

/** The toolset's tools in rendering order, each with its group. */
function toolList(document: PinnedToolset): { group: string; tool: PinnedTool }[] {
  return listToolGroups(document).flatMap(({ group, tools }) => tools.map((tool) => ({ group, tool })));
}

/** The names of `names` that are no tool of the toolset, in the order given, each once. */
export function unknownToolNames(document: PinnedToolset, names: readonly string[]): string[] {
  const known = new Set(toolList(document).map(({ group, tool }) => `${group}.${tool.name}`));
  return [...new Set(names.filter((name) => !known.has(name)))];
}

/** The declarations as asked; the registry's full renderings when nothing narrows them. */
export function renderDeclarations(toolset: ResolvedToolset, request: DeclarationsRequest): string {
  const options = {
    observed: toolset.observed,
    workflowInputs: toolset.workflowInputs,
    ...(request.tools ? { tools: new Set(request.tools) } : {}),
  };
  if (request.format === "dts") return request.tools ? renderDts(toolset.document, options) : toolset.dts;
  if (request.compact) return renderCompactPrompt(toolset.document, options);
  return request.tools ? renderPrompt(toolset.document, options) : toolset.prompt;
}

interface SearchIndex {
  ranker: ToolRanker;
  tools: { group: string; tool: PinnedTool }[];
}

const indexes = new WeakMap<ResolvedToolset, SearchIndex>();

function indexOf(toolset: ResolvedToolset): SearchIndex {
  let index = indexes.get(toolset);
  if (!index) {
    const tools = toolList(toolset.document);
    const ranker = createToolRanker(
      tools.map(({ group, tool }) => ({ group, name: tool.name, description: tool.description })),
    );
    index = { ranker, tools };
    indexes.set(toolset, index);
  }
  return index;
}

/** The `limit` tools that best match `query`, best first; none when no word of it is in the toolset. */
export function searchTools(toolset: ResolvedToolset, query: string, limit: number): FoundTool[] {
  const { ranker, tools } = indexOf(toolset);
  return ranker.rank(query, limit).flatMap(({ index, score }) => {
    const found = tools[index];
    if (!found) return [];
    const name = `${found.group}.${found.tool.name}`;
    return [{ name, line: compactLine(found.group, found.tool), score: Math.round(score * 1000) / 1000 }];
  });
}
