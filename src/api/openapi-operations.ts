/**
 * Every route of the API as the OpenAPI document lists it: which request schema it validates
 * with, which response schema each status answers with. The schemas are the routes' own zod
 * schemas (requests) and response-schemas.ts (responses); this table only names them, so it is
 * the one place to touch when a route is added. The contract test fails when it misses one.
 */
import type { z } from "zod";
import { END_USER_HEADER, registerToolsetBody } from "../contract/index.ts";
import { declarationsQuery, toolSearchQuery } from "./routes/toolsets.ts";
import { mcpQuery } from "./routes/mcp.ts";
import { saveRunBody } from "./routes/run-save.ts";
import { storeWorkflowBody } from "./routes/workflows.ts";
import {
  codecBody,
  credentialsBody,
  decideCallBody,
  elicitationAnswerBody,
  eventsEndpointBody,
  failCallBody,
  forkRunBody,
  journalQuery,
  listRunsQuery,
  rejectCallBody,
  resolveCallBody,
  rollbackRunBody,
  startRunBody,
} from "./schemas.ts";
import * as responses from "../contract/index.ts";

/** Request schemas, validated with `io: "input"` (defaults make fields optional). */
export const REQUEST_SCHEMAS = {
  RegisterToolsetRequest: registerToolsetBody,
  StartRunRequest: startRunBody,
  RejectCallRequest: rejectCallBody,
  DecideCallRequest: decideCallBody,
  ResolveCallRequest: resolveCallBody,
  FailCallRequest: failCallBody,
  ElicitationAnswerRequest: elicitationAnswerBody,
  EventsEndpointRequest: eventsEndpointBody,
  StoreWorkflowRequest: storeWorkflowBody,
  SaveRunRequest: saveRunBody,
  CredentialsRequest: credentialsBody,
  ForkRunRequest: forkRunBody,
  RollbackRunRequest: rollbackRunBody,
  CodecPayloads: codecBody,
  McpMessage: responses.mcpMessage,
} satisfies Record<string, z.ZodType>;

/** Response schemas, by component name. */
export const RESPONSE_SCHEMAS = {
  Error: responses.errorBody,
  TypeCheckError: responses.typeCheckErrorBody,
  PinnedToolset: responses.pinnedToolset,
  Toolset: responses.toolsetView,
  RegisteredToolset: responses.registeredToolsetView,
  ToolSearch: responses.toolSearchView,
  Run: responses.runView,
  ForkedRun: responses.forkedRunView,
  RunList: responses.runList,
  JournalEntry: responses.journalEntry,
  Cassette: responses.cassette,
  Journal: responses.journalView,
  CallDecision: responses.callDecision,
  ScriptDecision: responses.scriptDecision,
  EventsEndpoint: responses.eventsEndpointView,
  StoredWorkflow: responses.storedWorkflowView,
  Workflow: responses.workflowView,
  CredentialsWritten: responses.credentialsWritten,
  RunCredentialsRenewed: responses.runCredentialsRenewed,
  HookAccepted: responses.hookAccepted,
  Health: responses.health,
  Readiness: responses.readiness,
  CodecPayloadsAnswer: responses.codecPayloads,
  McpRefusal: responses.mcpRefusal,
} satisfies Record<string, z.ZodType>;

type ResponseName = keyof typeof RESPONSE_SCHEMAS;
/**
 * A response component, `text` (text/plain), `any` (a JSON document described elsewhere), `mcp`
 * (a JSON-RPC message, as JSON or as a stream of server-sent events) or `none` (no body).
 */
export type ResponseKind = ResponseName | "text" | "any" | "mcp" | "none";

export interface Operation {
  method: "get" | "post" | "put" | "delete";
  /** OpenAPI path, `{param}` style. */
  path: string;
  operationId: string;
  summary: string;
  tag: "runs" | "toolsets" | "workflows" | "events" | "codec" | "mcp" | "system";
  body?: keyof typeof REQUEST_SCHEMAS;
  /** Is the body optional (reject's `{reason?}` may be left out). */
  bodyOptional?: boolean;
  query?: z.ZodObject;
  /** Parameters no zod schema covers (headers, the webhook token). */
  parameters?: { name: string; in: "header" | "query"; required: boolean; description: string }[];
  /**
   * Success and specific error statuses; 500 is added to every route, 401 to every authenticated
   * one, and 503 (Temporal unreachable) to every one that needs Temporal.
   */
  responses: Record<number, ResponseKind>;
  /** Served without an API key (healthz, the document itself, webhook URLs). */
  public?: boolean;
  /** Answered without Temporal, so never a 503 when it is unreachable (healthz, the document, the codec). */
  withoutTemporal?: boolean;
}

const idempotencyKey = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: "Retries with the same key start one run (at most 200 characters).",
} as const;
const codecNamespace = {
  name: "X-Namespace",
  in: "header",
  required: false,
  description:
    "The Temporal namespace the payloads are from (the Web UI sends it); only the one this API serves is accepted.",
} as const;
const mcpHeaders = [
  {
    name: END_USER_HEADER,
    in: "header",
    required: false,
    description: "The end user the runs started here are for (or `?endUser=`; not both).",
  },
  {
    name: "Mcp-Session-Id",
    in: "header",
    required: false,
    description: "The session the answer to `initialize` named; every request after it carries it.",
  },
] as const;
/** The MCP route's refusals: the API's own errors, or the session's JSON-RPC errors. */
const MCP_REFUSALS = { 400: "McpRefusal", 404: "McpRefusal", 406: "McpRefusal", 415: "McpRefusal" } as const;
const MCP_SUMMARY =
  "The toolset as an MCP server (streamable HTTP, MCP 2025-11-25): tools search_tools, describe_tools, run_script " +
  "(an MCP task when asked) and get_run, and tasks/get, tasks/result, tasks/list, tasks/cancel over runs. ";

const hookToken = {
  name: "token",
  in: "query",
  required: true,
  description: "The token minted with the webhook URL.",
} as const;

export const OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/healthz",
    operationId: "health",
    summary: "Liveness",
    tag: "system",
    public: true,
    withoutTemporal: true,
    responses: { 200: "Health" },
  },
  {
    method: "get",
    path: "/readyz",
    operationId: "ready",
    summary: "Readiness: whether Temporal answers (503 unavailable while it does not)",
    tag: "system",
    public: true,
    responses: { 200: "Readiness" },
  },
  {
    method: "get",
    path: "/openapi.json",
    operationId: "openApi",
    summary: "This document",
    tag: "system",
    public: true,
    withoutTemporal: true,
    responses: { 200: "any" },
  },
  {
    method: "post",
    path: "/v1/toolsets",
    operationId: "registerToolset",
    tag: "toolsets",
    body: "RegisterToolsetRequest",
    summary: "Register a toolset: connect to its MCP servers, pin their tools, answer its content-addressed id",
    responses: {
      201: "RegisteredToolset",
      200: "RegisteredToolset",
      400: "Error",
      404: "Error",
      413: "Error",
      422: "Error",
    },
  },
  {
    method: "get",
    path: "/v1/toolsets/{id}",
    operationId: "getToolset",
    summary: "The pinned document",
    tag: "toolsets",
    responses: { 200: "Toolset", 404: "Error" },
  },
  {
    method: "get",
    path: "/v1/toolsets/{id}/declarations",
    operationId: "getDeclarations",
    tag: "toolsets",
    query: declarationsQuery,
    summary:
      "The rewind:tools declarations, for the type-checker (dts) or for a prompt: in full, compact (one line per tool), or for chosen tools (400 naming the unknown ones)",
    responses: { 200: "text", 400: "Error", 404: "Error" },
  },
  {
    method: "get",
    path: "/v1/toolsets/{id}/tools",
    operationId: "searchTools",
    tag: "toolsets",
    query: toolSearchQuery,
    summary: "The tools that best match a few words (BM25 over name, group and description), best first",
    responses: { 200: "ToolSearch", 400: "Error", 404: "Error" },
  },
  {
    method: "post",
    path: "/v1/toolsets/{id}/mcp",
    operationId: "mcpPost",
    tag: "mcp",
    body: "McpMessage",
    query: mcpQuery,
    parameters: [...mcpHeaders],
    summary: `${MCP_SUMMARY}POST: a message from the client (\`initialize\` opens a session); 202 for a notification or an answer`,
    responses: { 200: "mcp", 202: "none", ...MCP_REFUSALS, 413: "Error" },
  },
  {
    method: "get",
    path: "/v1/toolsets/{id}/mcp",
    operationId: "mcpStream",
    tag: "mcp",
    query: mcpQuery,
    parameters: [...mcpHeaders],
    summary: `${MCP_SUMMARY}GET: the session's stream of server messages (server-sent events)`,
    responses: { 200: "mcp", ...MCP_REFUSALS },
  },
  {
    method: "delete",
    path: "/v1/toolsets/{id}/mcp",
    operationId: "mcpEnd",
    tag: "mcp",
    query: mcpQuery,
    parameters: [...mcpHeaders],
    summary: `${MCP_SUMMARY}DELETE: end the session (its runs go on)`,
    responses: { 200: "none", ...MCP_REFUSALS },
  },
  {
    method: "post",
    path: "/v1/runs",
    operationId: "startRun",
    tag: "runs",
    body: "StartRunRequest",
    parameters: [idempotencyKey],
    summary: "Type-check a script and start a run of it (200 when an Idempotency-Key repeats)",
    responses: { 201: "Run", 200: "Run", 400: "Error", 404: "Error", 413: "Error", 422: "TypeCheckError" },
  },
  {
    method: "get",
    path: "/v1/runs",
    operationId: "listRuns",
    tag: "runs",
    query: listRunsQuery,
    summary:
      "Runs of the caller's namespace, newest first; filtered by status (parked included), toolset, end user and start time",
    responses: { 200: "RunList", 400: "Error" },
  },
  {
    method: "get",
    path: "/v1/runs/{id}",
    operationId: "getRun",
    summary: "Status, result or error, parked calls, Temporal UI link",
    tag: "runs",
    responses: { 200: "Run", 404: "Error" },
  },
  {
    method: "get",
    path: "/v1/runs/{id}/journal",
    operationId: "getJournal",
    tag: "runs",
    query: journalQuery,
    summary: "Every call with its seq, tool, arguments, status, result or error, attempts and times",
    responses: { 200: "Journal", 400: "Error", 404: "Error" },
  },
  {
    method: "post",
    path: "/v1/runs/{id}/calls/{seq}/approve",
    operationId: "approveCall",
    tag: "runs",
    body: "DecideCallRequest",
    bodyOptional: true,
    summary: "Send a call parked for approval; the journal records who approved (the API key's principal, and `by`)",
    responses: { 200: "CallDecision", 400: "Error", 404: "Error", 409: "Error" },
  },
  {
    method: "post",
    path: "/v1/runs/{id}/calls/{seq}/reject",
    operationId: "rejectCall",
    tag: "runs",
    body: "RejectCallRequest",
    bodyOptional: true,
    summary: "Reject a parked call: the script gets ToolError(rejected); the journal records who rejected it",
    responses: { 200: "CallDecision", 400: "Error", 404: "Error", 409: "Error" },
  },
  {
    method: "post",
    path: "/v1/runs/{id}/calls/{seq}/resume",
    operationId: "resumeCall",
    tag: "runs",
    body: "DecideCallRequest",
    bodyOptional: true,
    summary: "Send again a call parked on expired credentials, missing scope or a changed schema",
    responses: { 200: "CallDecision", 400: "Error", 404: "Error", 409: "Error" },
  },
  {
    method: "post",
    path: "/v1/runs/{id}/approve",
    operationId: "approveScript",
    tag: "runs",
    body: "DecideCallRequest",
    bodyOptional: true,
    summary:
      "Approve the script of a run waiting for that before its first step (event run.approval_requested): its first step runs",
    responses: { 200: "ScriptDecision", 400: "Error", 404: "Error", 409: "Error" },
  },
  {
    method: "post",
    path: "/v1/runs/{id}/reject",
    operationId: "rejectScript",
    tag: "runs",
    body: "RejectCallRequest",
    bodyOptional: true,
    summary:
      "Reject the script of a run waiting for its approval: the run fails with ScriptRejected and its script never runs",
    responses: { 200: "ScriptDecision", 400: "Error", 404: "Error", 409: "Error" },
  },
  {
    method: "post",
    path: "/v1/runs/{id}/calls/{seq}/resolve",
    operationId: "resolveCall",
    tag: "runs",
    body: "ResolveCallRequest",
    summary:
      "End a call parked on an unknown outcome (event call.outcome_unknown) with its result, unsent; it must fit the tool's output schema (422 invalidAnswer)",
    responses: { 200: "CallDecision", 400: "Error", 404: "Error", 409: "Error", 422: "Error" },
  },
  {
    method: "post",
    path: "/v1/runs/{id}/calls/{seq}/retry",
    operationId: "retryCall",
    tag: "runs",
    body: "DecideCallRequest",
    bodyOptional: true,
    summary: "Send a call parked on an unknown outcome again, with the same idempotency key (one attempt more)",
    responses: { 200: "CallDecision", 400: "Error", 404: "Error", 409: "Error" },
  },
  {
    method: "post",
    path: "/v1/runs/{id}/calls/{seq}/fail",
    operationId: "failCall",
    tag: "runs",
    body: "FailCallRequest",
    bodyOptional: true,
    summary: "Fail a call parked on an unknown outcome: the script gets ToolError(outcomeUnknown) with the reason",
    responses: { 200: "CallDecision", 400: "Error", 404: "Error", 409: "Error" },
  },
  {
    method: "post",
    path: "/v1/runs/{id}/calls/{seq}/elicitation",
    operationId: "answerElicitation",
    tag: "runs",
    body: "ElicitationAnswerRequest",
    summary:
      "Answer the input a call's MCP server asked for (event call.input_requested): accept with content that fits the requested schema, decline or cancel",
    responses: { 200: "CallDecision", 400: "Error", 404: "Error", 409: "Error", 422: "Error" },
  },
  {
    method: "post",
    path: "/v1/runs/{id}/fork",
    operationId: "forkRun",
    tag: "runs",
    body: "ForkRunRequest",
    summary:
      "Start a new run of a changed script that reuses the parent's finished calls while it issues the same ones",
    responses: { 201: "ForkedRun", 400: "Error", 404: "Error", 409: "Error", 422: "TypeCheckError" },
  },
  {
    method: "get",
    path: "/v1/runs/{id}/cassette",
    operationId: "getCassette",
    tag: "runs",
    summary: "The run, self-contained, to replay its script offline (never credentials)",
    responses: { 200: "Cassette", 404: "Error" },
  },
  {
    method: "post",
    path: "/v1/runs/{id}/save",
    operationId: "saveRun",
    tag: "runs",
    body: "SaveRunRequest",
    summary:
      "Store the run's script as a workflow that toolsets pin by name, pinned to the run's toolset or the one named (201, or 200 when already stored); 422 when it does not fit that toolset",
    responses: { 201: "StoredWorkflow", 200: "StoredWorkflow", 400: "Error", 404: "Error", 409: "Error", 422: "Error" },
  },
  {
    method: "put",
    path: "/v1/runs/{id}/credentials",
    operationId: "renewRunCredentials",
    tag: "runs",
    body: "CredentialsRequest",
    summary:
      "Replace a running run's own credentials, sealed and never returned; its calls parked on them are sent again with the same key",
    responses: { 200: "RunCredentialsRenewed", 400: "Error", 404: "Error", 409: "Error" },
  },
  {
    method: "post",
    path: "/v1/runs/{id}/signals/{name}",
    operationId: "signalRun",
    tag: "runs",
    summary:
      "Send the run the signal `name`: the JSON body (none: null) is what the script's `waitForSignal(name)` answers",
    responses: { 202: "HookAccepted", 400: "Error", 404: "Error", 409: "Error" },
  },
  {
    method: "post",
    path: "/v1/runs/{id}/cancel",
    operationId: "cancelRun",
    summary: "Cancel a run",
    tag: "runs",
    responses: { 200: "Run", 404: "Error" },
  },
  {
    method: "post",
    path: "/v1/runs/{id}/rollback",
    operationId: "rollbackRun",
    tag: "runs",
    body: "RollbackRunRequest",
    bodyOptional: true,
    summary:
      "Roll an open run back: its script takes no further step, calls not sent are withdrawn, calls being sent are waited for, then its completed calls are reverted newest first by their tools' revert policies, each a journaled call of its own; the run ends `rolledBack` (event run.rolled_back). 202 with the run (`rollback.state: rollingBack`); 409 once it ended, is ending or rolls back already",
    responses: { 202: "Run", 400: "Error", 404: "Error", 409: "Error" },
  },
  {
    method: "put",
    path: "/v1/toolsets/{id}/credentials",
    operationId: "setToolsetCredentials",
    tag: "toolsets",
    body: "CredentialsRequest",
    summary: "Headers for the toolset's MCP servers, sealed and never returned; wakes runs parked on them",
    responses: { 200: "CredentialsWritten", 400: "Error", 404: "Error" },
  },
  {
    method: "put",
    path: "/v1/end-users/{user}/toolsets/{id}/credentials",
    operationId: "setEndUserCredentials",
    tag: "toolsets",
    body: "CredentialsRequest",
    summary: "An end user's headers for the toolset's MCP servers; wakes that user's parked runs",
    responses: { 200: "CredentialsWritten", 400: "Error", 404: "Error" },
  },
  {
    method: "post",
    path: "/v1/workflows",
    operationId: "storeWorkflow",
    tag: "workflows",
    body: "StoreWorkflowRequest",
    summary: "Type-check and store a workflow script that toolsets pin by name",
    responses: { 201: "StoredWorkflow", 200: "StoredWorkflow", 400: "Error", 404: "Error", 422: "TypeCheckError" },
  },
  {
    method: "get",
    path: "/v1/workflows/{id}",
    operationId: "getWorkflow",
    summary: "A stored workflow script",
    tag: "workflows",
    responses: { 200: "Workflow", 404: "Error" },
  },
  {
    method: "put",
    path: "/v1/events/endpoint",
    operationId: "setEventsEndpoint",
    tag: "events",
    body: "EventsEndpointRequest",
    summary:
      "Where this namespace's events go; a generated secret is returned once. With API keys set, a URL whose address is not public (and not one the operator trusts) is refused: 422 targetNotAllowed",
    responses: { 200: "EventsEndpoint", 400: "Error", 422: "Error" },
  },
  {
    method: "get",
    path: "/v1/events/endpoint",
    operationId: "getEventsEndpoint",
    summary: "The events endpoint's URL",
    tag: "events",
    responses: { 200: "EventsEndpoint", 404: "Error" },
  },
  {
    method: "post",
    path: "/v1/codec/decode",
    operationId: "codecDecode",
    tag: "codec",
    body: "CodecPayloads",
    parameters: [codecNamespace],
    summary:
      "Temporal Codec Server decode, for the Temporal Web UI: each payload-store reference becomes the payload it names, others stay as sent",
    withoutTemporal: true,
    responses: { 200: "CodecPayloadsAnswer", 400: "Error", 404: "Error", 413: "Error" },
  },
  {
    method: "post",
    path: "/v1/codec/encode",
    operationId: "codecEncode",
    tag: "codec",
    body: "CodecPayloads",
    parameters: [codecNamespace],
    summary: "Temporal Codec Server encode: the payloads unchanged (Rewind's data converter has no codec)",
    withoutTemporal: true,
    responses: { 200: "CodecPayloadsAnswer", 400: "Error", 413: "Error" },
  },
  {
    method: "post",
    path: "/v1/hooks/{runId}/{name}",
    operationId: "receiveHook",
    tag: "runs",
    public: true,
    summary: "A run's webhook URL: the JSON body becomes the run's signal `name` (the token is the credential)",
    parameters: [hookToken],
    responses: { 202: "HookAccepted", 400: "Error", 404: "Error", 409: "Error" },
  },
];
