/** Every activity of the Rewind worker, built from its dependencies. */
import type { CallMetrics } from "../metrics/index.ts";
import { measuredAttempts } from "./attempt-metrics.ts";
import { createAdvanceScript, type AdvanceDeps } from "./advance-script.ts";
import { createAwaitCredentials, type AwaitCredentialsDeps } from "./await-credentials.ts";
import { createCallHttp, type HttpCallDeps } from "./call-http.ts";
import { createCallMcpTool, type McpCallDeps } from "./call-mcp-tool.ts";
import { createDeliverEvent, type DeliverEventDeps } from "./deliver-event.ts";
import { createMintWebhookUrl, type MintWebhookDeps } from "./mint-webhook-url.ts";
import { createRunLookups, type RunLookupDeps } from "./run-lookups.ts";

export type ActivityDeps = AdvanceDeps &
  AwaitCredentialsDeps &
  McpCallDeps &
  HttpCallDeps &
  DeliverEventDeps &
  MintWebhookDeps &
  RunLookupDeps & {
    /** Where each attempt of an MCP or http call is counted and timed; default: nowhere. */
    metrics?: CallMetrics;
  };

export function createActivities(deps: ActivityDeps) {
  return {
    advanceScript: createAdvanceScript(deps),
    awaitCredentials: createAwaitCredentials(deps),
    callMcpTool: measuredAttempts(deps.metrics, "mcp", (input) => input.server, createCallMcpTool(deps)),
    callHttp: measuredAttempts(deps.metrics, "http", () => "http", createCallHttp(deps)),
    deliverEvent: createDeliverEvent(deps),
    mintWebhookUrl: createMintWebhookUrl(deps),
    ...createRunLookups(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
export { createCallReports } from "./call-reports.ts";
export { createSessionOpener, type OpenSessions, type SessionOpener } from "./session-opener.ts";
export { runSessionsPrefix } from "./call-mcp-tool.ts";
export { noStepsAhead, stepsAheadIn, type StepsAhead } from "./steps-ahead.ts";
