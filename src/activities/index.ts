/** Every activity of the Rewind worker, built from its dependencies. */
import { createAdvanceScript, type AdvanceDeps } from "./advance-script.ts";
import { createCallMcpTool, type McpCallDeps } from "./call-mcp-tool.ts";

export type ActivityDeps = AdvanceDeps & McpCallDeps;

export function createActivities(deps: ActivityDeps) {
  return {
    advanceScript: createAdvanceScript(deps),
    callMcpTool: createCallMcpTool(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
