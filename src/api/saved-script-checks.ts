/**
 * Whether a run's script can be stored against a toolset, which may be another than the one it
 * ran on: the script must type-check against that toolset's declarations wherever it did against
 * its own, and every tool its journal shows it called must be there (a call made through a name
 * computed at run time escapes the type-checker). A run keeps its script with the types stripped,
 * so the JavaScript is checked against both toolsets and only the diagnostics the other toolset
 * adds are held against it: what stripping the types causes shows against both. Both are rendered
 * without observed result types: those depend on what runs of each toolset happened to record,
 * not on which tools it has, and would otherwise tell two toolsets with the same tools apart.
 */
import { renderDts, type Diagnostic, type ScriptChecker } from "../declarations/index.ts";
import type { PinnedToolset } from "../shared/index.ts";
import type { ResolvedToolset } from "../toolsets/index.ts";
import type { CalledTool } from "./run-start.ts";

/** Diagnostics of `javascript` against `other` that it does not have against `own`, the toolset it ran on. */
export async function diagnosticsAgainstOther(
  checker: ScriptChecker,
  javascript: string,
  own: ResolvedToolset,
  other: ResolvedToolset,
  namespace: string,
): Promise<Diagnostic[]> {
  if (own.id === other.id) return [];
  const at = (d: Diagnostic) => `${d.line}:${d.column}:${d.code}`;
  const check = async (toolset: ResolvedToolset) =>
    (
      await checker.inspect(
        {
          source: javascript,
          declarations: renderDts(toolset.document, { workflowInputs: toolset.workflowInputs }),
          declarationsKey: `${toolset.id}/unobserved`,
        },
        namespace,
      )
    ).diagnostics;
  const [before, after] = await Promise.all([check(own), check(other)]);
  const seen = new Set(before.map(at));
  return after.filter((d) => !seen.has(at(d)));
}

/** The tools of `called` that `toolset` lacks, as scripts name them (`github.list_issues`, `workflows.triage`, `fetch`). */
export function toolsLacked(toolset: PinnedToolset, called: CalledTool[]): string[] {
  const lacked = new Set<string>();
  for (const { tool, workflow } of called) {
    if (hasGroupTool(toolset, tool)) continue;
    if (tool === "http.fetch") {
      if (!toolset.http) lacked.add("fetch");
    } else if (tool === "rewind.workflows.start" || tool === "rewind.workflows.signal") {
      if (workflow === undefined || !Object.hasOwn(toolset.workflows, workflow)) lacked.add(`workflows.${workflow}`);
    } else if (!tool.startsWith("rewind.")) {
      lacked.add(tool);
    }
  }
  return [...lacked].sort();
}

/** Is `group.tool` one of the toolset's MCP or host tools (the name splits at its first dot, as calls are named). */
function hasGroupTool(toolset: PinnedToolset, qualified: string): boolean {
  const dot = qualified.indexOf(".");
  if (dot < 0) return false;
  const group = qualified.slice(0, dot);
  const name = qualified.slice(dot + 1);
  const tools = Object.hasOwn(toolset.mcpServers, group)
    ? toolset.mcpServers[group]?.tools
    : Object.hasOwn(toolset.hostTools, group)
      ? toolset.hostTools[group]?.tools
      : undefined;
  return tools?.some((t) => t.name === name) ?? false;
}
