/** Every activity of the Rewind worker, built from its dependencies. */
import { createAdvanceScript, type AdvanceDeps } from "./advance-script.ts";
import { createCallHttp, type HttpCallDeps } from "./call-http.ts";
import { createCallMcpTool, type McpCallDeps } from "./call-mcp-tool.ts";
import { createDeliverEvent, type DeliverEventDeps } from "./deliver-event.ts";
import { createMintWebhookUrl, type MintWebhookDeps } from "./mint-webhook-url.ts";
import { createRunLookups, type RunLookupDeps } from "./run-lookups.ts";

export type ActivityDeps = AdvanceDeps & McpCallDeps & HttpCallDeps & DeliverEventDeps & MintWebhookDeps & RunLookupDeps;

export function createActivities(deps: ActivityDeps) {
  return {
    advanceScript: createAdvanceScript(deps),
    callMcpTool: createCallMcpTool(deps),
    callHttp: createCallHttp(deps),
    deliverEvent: createDeliverEvent(deps),
    mintWebhookUrl: createMintWebhookUrl(deps),
    ...createRunLookups(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
