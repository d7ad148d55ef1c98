/**
 * A small typed client of the Rewind HTTP API, for harnesses and the `rewind` CLI. It speaks
 * JSON over fetch and nothing else; every non-2xx answer becomes one RewindApiError carrying the
 * API's `{code, message, details}`, so callers branch on `code` instead of parsing messages.
 *
 * @example
 * const api = createApiClient({ url: "http://127.0.0.1:8787" });
 * const run = await api.startRun({ script: "export default async () => 42" });
 * console.log((await api.getRun(run.id)).status);
 */
import type {
  CredentialsBody,
  RegisterToolsetBody,
  ApiErrorBody,
  CallDecisionBody,
  EventsEndpointBody,
  ScriptDecisionBody,
  JournalBody,
  RegisteredToolsetView,
  RunListBody,
  RunViewBody,
  StoredWorkflowBody,
  ToolSearchBody,
  ToolsetView,
  WorkflowViewBody,
} from "../contract/index.ts";
import { isApiErrorCode, type ApiErrorCode, type ClientErrorCode } from "../shared/index.ts";
import type { ElicitationAnswer, Cassette } from "../shared/index.ts";

export type { ApiErrorCode, ClientErrorCode } from "../shared/index.ts";
export type {
  ApiErrorBody,
  CallDecisionBody,
  Diagnostic,
  ScriptDecisionBody,
  JournalBody,
  JournalEntryBody,
  RegisteredToolsetView,
  RunListBody,
  RunViewBody,
  ToolSearchBody,
  ToolsetView,
} from "../contract/index.ts";

export interface ApiClientOptions {
  /** Base URL of the API, e.g. `http://127.0.0.1:8787`. */
  url: string;
  /** Sent as `Authorization: Bearer <key>`; unset for a loopback API without keys. */
  apiKey?: string | undefined;
  /** The fetch to use. Default: the global fetch. */
  fetch?: typeof fetch;
}

export class RewindApiError extends Error {
  override name = "RewindApiError";
  /** The HTTP status; 0 when the API could not be reached at all. */
  readonly status: number;
  /**
   * The API's error code (`notFound`, `typeCheckFailed`…; docs/errors.md lists them), or
   * `unreachable` when no answer came, or `unexpected` for an answer without a known code.
   */
  readonly code: ApiErrorCode | ClientErrorCode;
  readonly details: unknown;
  /** The response body as sent, when there was one. */
  readonly body: unknown;
  /**
   * Whether the same request may succeed later as it is: `unavailable` (503: Temporal is
   * unreachable, or no worker answered for the run) and `unreachable` (the API itself did not
   * answer). Repeat a run's start with the same `idempotencyKey`, so it starts one run at most.
   */
  readonly retryable: boolean;

  constructor(
    status: number,
    code: ApiErrorCode | ClientErrorCode,
    message: string,
    details?: unknown,
    body?: unknown,
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
    this.body = body;
    this.retryable = code === "unavailable" || code === "unreachable";
  }
}

export interface StartRunRequest {
  script: string;
  input?: unknown;
  toolset?: string;
  endUser?: string;
  /** `rollback`: a script that fails rolls the run back (its tools' revert policies) instead of failing. */
  onFailure?: "fail" | "rollback";
  /** Wait, before the first step, for `approveScript` (or `rejectScript`); default false. */
  approveScript?: boolean;
  /** Retries with the same key start one run. */
  idempotencyKey?: string;
}

/** What `getDeclarations` renders besides the chosen format. */
export interface DeclarationsOptions {
  /** With `prompt`: begin with the short guide to writing a Rewind script. Default false. */
  guide?: boolean;
  /** With `prompt`: one line per tool, its qualified name and first sentence, no types. Default false. */
  compact?: boolean;
  /** Only these tools (`group.tool`), e.g. the ones a model picked from the compact list. Default: all. */
  tools?: string[];
}

/** Which runs `listRuns` answers: a page, and filters (each optional). */
export interface ListRunsRequest {
  pageSize?: number;
  pageToken?: string;
  status?: RunListBody["runs"][number]["status"];
  toolset?: string;
  endUser?: string;
  /** Runs started at or after this time (a Date or an ISO 8601 string). */
  startedAfter?: Date | string;
  /** Runs started before this time. */
  startedBefore?: Date | string;
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function errorFrom(status: number, body: unknown): RewindApiError {
  const error = (body as Partial<ApiErrorBody> | undefined)?.error;
  if (error && typeof error.message === "string")
    return new RewindApiError(
      status,
      isApiErrorCode(error.code) ? error.code : "unexpected",
      error.message,
      error.details,
      body,
    );
  return new RewindApiError(status, "unexpected", `the API answered ${status} without an error body`, undefined, body);
}

export function createApiClient(options: ApiClientOptions) {
  const base = options.url.replace(/\/+$/, "");
  const fetchImpl = options.fetch ?? fetch;

  async function send(
    method: string,
    route: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const all: Record<string, string> = { accept: "application/json", ...headers };
    if (options.apiKey) all["authorization"] = `Bearer ${options.apiKey}`;
    if (body !== undefined) all["content-type"] = "application/json";
    try {
      return await fetchImpl(base + route, {
        method,
        headers: all,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
      throw new RewindApiError(0, "unreachable", `could not reach the Rewind API at ${base} (${cause})`);
    }
  }

  async function json<T>(method: string, route: string, body?: unknown, headers?: Record<string, string>): Promise<T> {
    const response = await send(method, route, body, headers);
    const text = await response.text();
    const parsed = parseJson(text);
    if (!response.ok) throw errorFrom(response.status, parsed);
    if (parsed === undefined)
      throw new RewindApiError(
        response.status,
        "unexpected",
        `the API answered ${response.status} with a body that is not JSON`,
      );
    return parsed as T;
  }

  const run = (id: string) => `/v1/runs/${encodeURIComponent(id)}`;

  return {
    url: base,
    registerToolset: (body: RegisterToolsetBody) => json<RegisteredToolsetView>("POST", "/v1/toolsets", body),
    getToolset: (id: string) => json<ToolsetView>("GET", `/v1/toolsets/${encodeURIComponent(id)}`),
    /**
     * The `rewind:tools` declarations; a tool name `options.tools` does not find is a 400 listing it.
     * @example const lines = await api.getDeclarations(id, "prompt", { compact: true });
     */
    async getDeclarations(
      id: string,
      format: "dts" | "prompt" = "dts",
      options: DeclarationsOptions = {},
    ): Promise<string> {
      const query = new URLSearchParams({ format });
      if (options.guide) query.set("guide", "true");
      if (options.compact) query.set("compact", "true");
      if (options.tools) query.set("tools", options.tools.join(","));
      const response = await send("GET", `/v1/toolsets/${encodeURIComponent(id)}/declarations?${query}`);
      const text = await response.text();
      if (!response.ok) throw errorFrom(response.status, parseJson(text));
      return text;
    },
    /**
     * The tools of a toolset that best match a few words, best first, as compact lines.
     * @example const { tools } = await api.searchTools(id, "open a pull request", { limit: 5 });
     */
    searchTools: (id: string, query: string, options: { limit?: number } = {}) =>
      json<ToolSearchBody>(
        "GET",
        `/v1/toolsets/${encodeURIComponent(id)}/tools?${new URLSearchParams({ query, ...(options.limit === undefined ? {} : { limit: String(options.limit) }) })}`,
      ),
    startRun: ({ idempotencyKey, ...body }: StartRunRequest) =>
      json<RunViewBody>("POST", "/v1/runs", body, idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
    /** A page of runs, newest first; `nextPageToken` fetches the next with the same filters. */
    listRuns: (request: ListRunsRequest = {}) => {
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(request)) {
        if (value === undefined || value === "") continue;
        query.set(name, value instanceof Date ? value.toISOString() : String(value));
      }
      return json<RunListBody>("GET", `/v1/runs${query.size > 0 ? `?${query}` : ""}`);
    },
    getRun: (id: string) => json<RunViewBody>("GET", run(id)),
    getJournal: (id: string, page: { afterSeq?: number; limit?: number } = {}) =>
      json<JournalBody>("GET", `${run(id)}/journal?afterSeq=${page.afterSeq ?? 0}&limit=${page.limit ?? 200}`),
    /** `by`: on whose behalf (recorded in the journal with the API key's principal). */
    approveCall: (id: string, seq: number, by?: string) =>
      json<CallDecisionBody>("POST", `${run(id)}/calls/${seq}/approve`, by ? { by } : {}),
    rejectCall: (id: string, seq: number, reason?: string, by?: string) =>
      json<CallDecisionBody>("POST", `${run(id)}/calls/${seq}/reject`, {
        ...(reason ? { reason } : {}),
        ...(by ? { by } : {}),
      }),
    resumeCall: (id: string, seq: number, by?: string) =>
      json<CallDecisionBody>("POST", `${run(id)}/calls/${seq}/resume`, by ? { by } : {}),
    /**
     * Approves the script of a run waiting for that before its first step (event
     * `run.approval_requested`): the first step runs.
     * @example await api.approveScript(runId, "reviewer");
     */
    approveScript: (id: string, by?: string) =>
      json<ScriptDecisionBody>("POST", `${run(id)}/approve`, by ? { by } : {}),
    /** Rejects the script of a run waiting for its approval: the run fails with ScriptRejected, never having run it. */
    rejectScript: (id: string, reason?: string, by?: string) =>
      json<ScriptDecisionBody>("POST", `${run(id)}/reject`, {
        ...(reason ? { reason } : {}),
        ...(by ? { by } : {}),
      }),
    /**
     * Ends a call parked on an unknown outcome (event `call.outcome_unknown`) with its result,
     * unsent; the result must fit the tool's output schema (else `invalidAnswer`).
     * @example await api.resolveCall(runId, 3, { charged: true }, "ops");
     */
    resolveCall: (id: string, seq: number, result: unknown, by?: string) =>
      json<CallDecisionBody>("POST", `${run(id)}/calls/${seq}/resolve`, { result, ...(by ? { by } : {}) }),
    /** Sends a call parked on an unknown outcome again, with the same idempotency key. */
    retryCall: (id: string, seq: number, by?: string) =>
      json<CallDecisionBody>("POST", `${run(id)}/calls/${seq}/retry`, by ? { by } : {}),
    /** Fails a call parked on an unknown outcome: the script gets ToolError(outcomeUnknown). */
    failCall: (id: string, seq: number, reason?: string, by?: string) =>
      json<CallDecisionBody>("POST", `${run(id)}/calls/${seq}/fail`, {
        ...(reason ? { reason } : {}),
        ...(by ? { by } : {}),
      }),
    /** Answers the input call `seq`'s server asked for (event `call.input_requested`). */
    answerElicitation: (id: string, seq: number, answer: ElicitationAnswer) =>
      json<{ seq: number }>("POST", `${run(id)}/calls/${seq}/elicitation`, answer),
    /** Without `credentials`, the fork inherits its parent's own (as last renewed). */
    forkRun: (
      id: string,
      body: { script: string; input?: unknown; parent?: "keep" | "cancel"; credentials?: CredentialsBody },
    ) => json<RunViewBody & { forkedFrom: string }>("POST", `${run(id)}/fork`, body),
    /** Replaces a running run's own credentials; its calls parked on them are sent again. */
    renewRunCredentials: (id: string, credentials: CredentialsBody) =>
      json<{ runId: string; scope: "run" }>("PUT", `${run(id)}/credentials`, credentials),
    /** The toolset's credentials (or an end user's for it); wakes the runs parked on them. */
    setToolsetCredentials: (toolsetId: string, credentials: CredentialsBody, endUser?: string) =>
      json<{ resumedRuns: number }>(
        "PUT",
        `${endUser === undefined ? "/v1" : `/v1/end-users/${encodeURIComponent(endUser)}`}/toolsets/${encodeURIComponent(toolsetId)}/credentials`,
        credentials,
      ),
    /**
     * Stores the run's script as a workflow toolsets pin by name (`workflows.<name>` in scripts),
     * pinned to the run's toolset, or to `toolset` when the script fits it.
     * @example const { id } = await api.saveRun(runId, { name: "triage", description: "Files a ticket per report" });
     */
    saveRun: (id: string, body: { name: string; description?: string; toolset?: string }) =>
      json<StoredWorkflowBody>("POST", `${run(id)}/save`, body),
    getCassette: (id: string) => json<Cassette>("GET", `${run(id)}/cassette`),
    cancelRun: (id: string) => json<RunViewBody>("POST", `${run(id)}/cancel`),
    /**
     * Sends a running run the signal `name`: `payload` is what its script's `waitForSignal(name)`
     * answers (a signal sent before the script waits for it waits in the run's inbox).
     * @example await api.signalRun(runId, "approved-by-legal", { by: "dana" });
     */
    signalRun: (id: string, name: string, payload: unknown = null) =>
      json<{ accepted: true }>("POST", `${run(id)}/signals/${encodeURIComponent(name)}`, payload),
    /**
     * Rolls an open run back: its script stops, and its completed calls are reverted newest first
     * by their tools' revert policies; it ends `rolledBack` (`run.rollback` says what was reverted).
     * @example await api.rollbackRun(runId, { reason: "order cancelled", by: "alice" });
     */
    rollbackRun: (id: string, body: { by?: string; reason?: string } = {}) =>
      json<RunViewBody>("POST", `${run(id)}/rollback`, body),
    storeWorkflow: (body: { name: string; script: string; toolset?: string }) =>
      json<StoredWorkflowBody>("POST", "/v1/workflows", body),
    getWorkflow: (id: string) => json<WorkflowViewBody>("GET", `/v1/workflows/${encodeURIComponent(id)}`),
    setEventsEndpoint: (body: { url: string; secret?: string }) =>
      json<EventsEndpointBody>("PUT", "/v1/events/endpoint", body),
    getEventsEndpoint: () => json<EventsEndpointBody>("GET", "/v1/events/endpoint"),
  };
}

export type ApiClient = ReturnType<typeof createApiClient>;
