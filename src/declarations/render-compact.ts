/**
 * The compact prompt rendering, for toolsets too large to show in full: one line per tool, its
 * qualified name and the first sentence of its description, no types, then the import line's
 * built-ins as the full rendering has them. A model reads the whole list, picks tools, and its
 * harness asks for their full declarations (`?tools=a.b,c.d`); scripts are still type-checked
 * against the full declarations, so nothing here has to be exact about types. Nor does it show
 * arguments' constraints and defaults (`(1–50, default 10)`): they are said where the arguments
 * are, in the full rendering the harness asks for once a tool is picked, and a model choosing
 * tools by what they do has no use for them yet.
 */
import type { PinnedTool, PinnedToolset } from "../shared/index.ts";
import type { RenderOptions } from "./render-dts.ts";
import { promptText, summarize, toolReference } from "./render-prompt.ts";

/** Shorter than the full rendering's cut: here the description is all a tool has. */
const COMPACT_SUMMARY_LENGTH = 100;

/** One tool on one line: `github.list_issues · List the issues of a repository.` */
export function compactLine(group: string, tool: PinnedTool): string {
  const summary = summarize(tool.description, COMPACT_SUMMARY_LENGTH);
  return `${toolReference(group, tool.name)}${summary ? ` · ${summary}` : ""}`;
}

export function renderCompactPrompt(toolset: PinnedToolset, options: RenderOptions = {}): string {
  return promptText(toolset, options, (groups) =>
    groups.flatMap(({ group, tools }) => tools.map((tool) => compactLine(group, tool))),
  );
}
