/** Every activity of the Rewind worker, built from its dependencies. */
import { createAdvanceScript, type AdvanceDeps } from "./advance-script.ts";
import { createCallMcpTool, type McpCallDeps } from "./call-mcp-tool.ts";
import { createDeliverEvent, type DeliverEventDeps } from "./deliver-event.ts";

export type ActivityDeps = AdvanceDeps & McpCallDeps & DeliverEventDeps;

export function createActivities(deps: ActivityDeps) {
  return {
    advanceScript: createAdvanceScript(deps),
    callMcpTool: createCallMcpTool(deps),
    deliverEvent: createDeliverEvent(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
