/**
 * A registration's `tools: { include } | { exclude }` for one MCP server, applied to what the
 * server lists before anything is pinned: the pinned document holds only the kept tools. An
 * include naming a tool the server does not list is refused (a typo would otherwise pin less
 * than asked, silently); an exclude naming one is not (the tool is absent either way).
 */
import type { ListedTool } from "./pin-tool.ts";
import { RegistrationError } from "./registration-error.ts";
import type { ToolSelection } from "../contract/index.ts";

export interface SelectedTools {
  kept: ListedTool[];
  /** Names listed by the server and left out by the selection. */
  filteredOut: string[];
}

export function selectTools(
  listed: ListedTool[],
  selection: ToolSelection | undefined,
  where: string,
  details: Record<string, unknown>,
): SelectedTools {
  if (!selection) return { kept: listed, filteredOut: [] };
  const named = new Set("include" in selection ? selection.include : selection.exclude);
  if ("include" in selection) {
    const listedNames = new Set(listed.map((t) => t.name));
    const missing = [...named].filter((name) => !listedNames.has(name));
    if (missing.length > 0) {
      const names = missing.map((name) => `"${name}"`).join(", ");
      throw new RegistrationError(
        422,
        `${where} does not list ${missing.length === 1 ? "the tool" : "the tools"} ${names} named in tools.include`,
        { ...details, reason: "unknownTools", tools: missing },
      );
    }
  }
  const keep = (tool: ListedTool) => ("include" in selection ? named.has(tool.name) : !named.has(tool.name));
  return { kept: listed.filter(keep), filteredOut: listed.filter((t) => !keep(t)).map((t) => String(t.name)) };
}
